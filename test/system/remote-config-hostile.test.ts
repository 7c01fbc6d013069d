// Hostile remote configuration through interface B against the emulator: each refused with a
// clear answer, nothing applied half, polling and reporting go on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './harness.js';
import { meter, RemoteRig } from './remote-config-rig.js';

describe('remote configuration refuses hostile inputs', () => {
  let rig: RemoteRig;
  beforeAll(async () => {
    // The emulator takes a 10 MB command body, so fieldgate's own bound is what answers it.
    rig = await RemoteRig.start([meter('meter-1', 1, 'demo-meter-1-token')], { jsonMaxBytes: 16 * 1024 * 1024, siteBlock: '{ checksPerMinute: 30 }' });
    await waitFor(() => (rig.gateway?.status().devices[0]?.online ? true : undefined), 20_000);
  }, 60_000);
  afterAll(async () => {
    await rig?.close();
  });

  async function base(): Promise<{ text: string; digest: string }> {
    const got = await rig.command('site_get');
    return { text: got.text as string, digest: got.digest as string };
  }

  /** Still polling and reporting: meter-1's poll cycles with values grow, and the cloud stores its values. */
  async function stillPolling(): Promise<void> {
    const cycles = () => rig.gateway!.status().devices[0]!.cyclesWithValues ?? 0;
    const first = cycles();
    await waitFor(() => (cycles() > first + 2 && rig.gateway!.status().devices[0]!.online ? true : undefined), 20_000);
  }

  it('a 10 MB text is refused unread by the inbound bound; nothing changes', async () => {
    const { digest } = await base();
    const huge = `# ${'x'.repeat(10 * 1024 * 1024)}\n`;
    const answer = await rig.command('site_apply', { text: huge, baseDigest: digest, confirmWithinS: 10 });
    expect(answer).toMatchObject({ error: { code: 400, message: expect.stringMatching(/exceeds the \d+ byte limit/) } });
    expect((await base()).digest).toBe(digest);
    await stillPolling();
  }, 60_000);

  it('a YAML anchor bomb and a deeply nested text are refused with their problems, never applied', async () => {
    const { text, digest } = await base();
    const bomb = `${text}\nbomb:\n  a: &a [x, x, x, x, x, x, x, x, x, x]\n  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n  e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n`;
    const bombAnswer = await rig.command('site_apply', { text: bomb, baseDigest: digest, confirmWithinS: 10 });
    expect(bombAnswer).toMatchObject({ outcome: 'refused' });
    expect(JSON.stringify(bombAnswer.problems)).toMatch(/alias|Excessive|unknown key/i);
    const deep = `${text}\nnest: ${'['.repeat(5000)}${']'.repeat(5000)}\n`;
    const deepAnswer = await rig.command('site_check', { text: deep });
    expect(deepAnswer).toMatchObject({ valid: false, problems: [{ path: expect.stringMatching(/^site:\d+$/), message: expect.stringContaining('nested more than 64 levels') }] });
    expect((await base()).digest).toBe(digest);
    await stillPolling();
  }, 60_000);

  it('a text that removes the own identity or moves its link is refused: it would cut the way back', async () => {
    const { text, digest } = await base();
    const noIdentity = text.replace(/\n {4}identity: .*\n/, '\n');
    expect(noIdentity).not.toContain('identity');
    const answer = await rig.command('site_apply', { text: noIdentity, baseDigest: digest, confirmWithinS: 10 });
    expect(answer).toMatchObject({ outcome: 'refused', problems: [{ path: 'gateway.cloud.identity', message: expect.stringContaining('the way back') }] });
    const moved = text.replace(/mqttUrl: mqtt:\/\/127\.0\.0\.1:\d+/, 'mqttUrl: mqtt://127.0.0.1:1');
    const movedAnswer = await rig.command('site_check', { text: moved });
    expect(movedAnswer).toMatchObject({ valid: false, problems: [{ path: 'gateway.cloud.mqttUrl', message: expect.stringContaining('moves the link') }] });
    expect((await base()).digest).toBe(digest);
  }, 60_000);

  it('a placeholder copied outside a secret field, or one never given out, is refused; no secret is in any answer', async () => {
    const { text, digest } = await base();
    const copied = text.replace('name: meter-1', 'name: "{{secret-1}}"');
    const answer = await rig.command('site_check', { text: copied });
    expect(answer).toMatchObject({ valid: false, problems: [{ message: expect.stringContaining('outside a secret field') }] });
    const unknown = await rig.command('site_apply', { text: text.replace(/\{\{secret-1\}\}/, '{{secret-99}}'), baseDigest: digest, confirmWithinS: 0 });
    expect(unknown).toMatchObject({ outcome: 'refused', problems: [{ message: expect.stringContaining('{{secret-99}} is not a placeholder') }] });
    // A bad value next to a secret: the problem names the path, never the token.
    const badPoll = text.replace('pollIntervalMs: 300', 'pollIntervalMs: demo-meter-1-token');
    const bad = await rig.command('site_check', { text: badPoll });
    expect(bad.valid).toBe(false);
    expect(JSON.stringify(bad)).not.toMatch(/demo-meter-1-token|demo-gateway-token|demo-project-key/);
  }, 60_000);

  it('two applies at once: one is taken, the other refused; an apply inside a confirmation window is refused; confirm after rollback and rollback to an unknown generation are refused', async () => {
    const { text, digest } = await base();
    const a = text.replace('pollIntervalMs: 300', 'pollIntervalMs: 400');
    const b = text.replace('pollIntervalMs: 300', 'pollIntervalMs: 500');
    const [first, second] = await Promise.all([
      rig.command('site_apply', { text: a, baseDigest: digest, confirmWithinS: 30 }),
      rig.command('site_apply', { text: b, baseDigest: digest, confirmWithinS: 30 }),
    ]);
    const outcomes = [first.outcome, second.outcome].sort();
    expect(outcomes).toEqual(['awaiting_confirm', 'refused']);
    const loser = first.outcome === 'refused' ? first : second;
    expect(JSON.stringify(loser.problems)).toMatch(/another site change is in progress|awaits confirmation/);
    const generation = (first.outcome === 'refused' ? second : first).generation as number;
    const during = await rig.command('site_apply', { text: b, baseDigest: (await base()).digest, confirmWithinS: 30 });
    expect(during).toMatchObject({ outcome: 'refused', problems: [{ message: expect.stringContaining(`generation ${generation} awaits confirmation`) }] });
    expect(await rig.command('site_rollback', { generation: 999 })).toMatchObject({ outcome: 'refused', problems: [{ message: expect.stringContaining('generation 999 is not in the history') }] });
    expect(await rig.command('site_rollback', { generation: 'latest' })).toMatchObject({ error: { code: 400 } });
    const back = await rig.command('site_rollback', { generation: generation - 1 });
    expect(back).toMatchObject({ outcome: 'rolled_back', generation: generation - 1 });
    expect(await rig.command('site_confirm')).toMatchObject({ outcome: 'refused', problems: [{ message: expect.stringContaining(`generation ${generation} was rolled back (site_rollback)`) }] });
    expect((await base()).digest).toBe(digest);
    await stillPolling();
  }, 60_000);

  it('a flood of site_check is answered, the excess rate limited or busy, and polling goes on', async () => {
    const { text } = await base();
    const answers = await Promise.all(Array.from({ length: 40 }, () => rig.command('site_check', { text })));
    const limited = answers.filter((a) => (a.error as { code?: number } | undefined)?.code === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(answers.filter((a) => a.valid === true).length).toBeGreaterThan(0);
    expect(answers.every((a) => a.valid === true || (a.error as { code?: number } | undefined)?.code === 429)).toBe(true);
    await stillPolling();
  }, 90_000);
});
