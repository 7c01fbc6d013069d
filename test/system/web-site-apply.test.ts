// The page's Apply goes through the reload path whole or not at all, and applies only the text it
// wrote: a file rewritten in place between the page's write and the reload's read (another editor,
// a deployment; here truncated to a shorter file that is still valid) is refused, nothing changes,
// and the answer and the log say why. The daemon runs in this process from a real site file with
// its page on; the race is made certain by a reload already running (held by the test) that the
// page's reload waits behind, as it waits behind a SIGHUP's.
import { createHash } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle, ReloadCandidate } from '../../src/ops/gateway-handle.js';
import { loadConfigWithDigest } from '../../src/ops/site-file.js';
import { captureLog, type CapturedLog } from '../helpers/capture-log.js';
import { freePort } from '../helpers/mosquitto.js';
import { startSite, waitFor, type Site } from './harness.js';
import { meterEntry, PageClient, pageSiteText } from './web-rig.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('Apply from the page against a file rewritten in place', () => {
  let site: Site;
  let gateway: GatewayHandle | undefined;
  let file: string;
  let page: PageClient;
  let capture: CapturedLog;

  beforeEach(async () => {
    site = await startSite();
    const port = await freePort();
    file = join(site.stateDir, 'site.yaml');
    writeFileSync(file, pageSiteText(site, port, [meterEntry('meter-1', 1, 'demo-meter-1-token'), meterEntry('meter-2', 2, 'demo-meter-2-token')], 'info'));
    const { config, sha256: digest } = loadConfigWithDigest(file, {});
    capture = captureLog();
    gateway = await startGateway(config, { logger: capture.log, env: {}, siteFile: file, configSha256: digest });
    page = new PageClient(`http://127.0.0.1:${gateway.webPort}`);
    await page.session();
  }, 60_000);

  afterEach(async () => {
    await gateway?.stop();
    gateway = undefined;
    await site?.close();
  });

  /** A reload the test holds open: the page's reload queues behind it. It changes nothing. */
  function holdReloads(g: GatewayHandle): { release(): void; done: Promise<unknown> } {
    let release = () => undefined as void;
    const held = new Promise<ReloadCandidate>((resolve) => {
      release = () => resolve({ issues: [{ path: 'test', message: 'held reload, nothing to apply' }] });
    });
    return { release, done: g.reload(() => held) };
  }

  async function shownText(): Promise<string> {
    const res = await fetch(`${page.base}/api/site`, { headers: page.headers() });
    expect(res.status).toBe(200);
    return ((await res.json()) as { text: string }).text;
  }

  it('a truncated rewrite between the page\'s write and the reload\'s read is refused whole: nothing applied, the answer names both digests', async () => {
    const g = gateway!;
    const edited = (await shownText()).replace(/(name: meter-2[\s\S]*?pollIntervalMs: )500/, '$11000');
    expect(edited).toContain('pollIntervalMs: 1000');
    const held = holdReloads(g);
    const answer = page.post('/api/site/apply', { text: edited });
    // The page wrote its text (secrets back in) and waits for its reload.
    const written = await waitFor(() => {
      const now = readFileSync(file, 'utf8');
      return now.includes('pollIntervalMs: 1000') ? now : undefined;
    }, 20_000);
    const inode = statSync(file).ino;
    // Another writer truncates the file and has written only its first device when the reload reads it.
    const truncated = written.slice(0, written.indexOf('  - name: meter-2'));
    writeFileSync(file, truncated);
    expect(statSync(file).ino).toBe(inode);
    held.release();
    await held.done;

    const res = await answer;
    expect(res.status).toBe(200);
    const body = (await res.json()) as { outcome: string; generation: number; sha256: string; problems: Array<{ path: string; message: string }> };
    expect(body.outcome).toBe('refused');
    expect(body.sha256).toBe(sha256(written));
    // The other writer's file is theirs: not put back.
    expect((body as { fileRestored?: boolean }).fileRestored).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe(truncated);
    expect(body.problems).toEqual([{ path: file, message: `changed after the page wrote it (read sha256 ${sha256(truncated)}, written ${sha256(written)}): nothing applied; open the site file again` }]);
    expect(body.generation).toBe(1);
    expect(g.status().devices.map((d) => d.name)).toEqual(['meter-1', 'meter-2']);
    expect(g.status().config).toMatchObject({ generation: 1, reloads: { applied: 0, refused: 2 } });
    const refusals = capture.messages('site file reload refused: nothing changed');
    expect(refusals).toHaveLength(2);
    expect(String(refusals[1].problems)).toContain('changed after the page wrote it');
    expect(capture.messages('site file reload removes more than half the devices')).toHaveLength(0);
  }, 60_000);

  it('a reload refused after the page wrote the file (a key that needs a restart) puts the file back as it was: the next start runs what runs now', async () => {
    const g = gateway!;
    const before = readFileSync(file, 'utf8');
    const edited = (await shownText()).replace('syncPeriodMs: 0', 'syncPeriodMs: 5000');
    expect(edited).toContain('syncPeriodMs: 5000');
    const res = await page.post('/api/site/apply', { text: edited });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { outcome: string; generation: number; fileRestored: boolean; problems: Array<{ path: string; message: string }> };
    expect(body.outcome).toBe('refused');
    expect(body.fileRestored).toBe(true);
    expect(body.problems.map((p) => p.path)).toEqual(['gateway.cloud.syncPeriodMs']);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(g.status().config).toMatchObject({ generation: 1, sha256: sha256(before) });
    expect(capture.messages('reload from the page not applied; site file put back as it was')).toEqual([expect.objectContaining({ outcome: 'refused', sha256: sha256(before) })]);
  }, 60_000);

  it('without a race: applied, and the answer carries the digest of the text written, which the daemon runs', async () => {
    const g = gateway!;
    const edited = (await shownText()).replace(/(name: meter-2[\s\S]*?pollIntervalMs: )500/, '$11000');
    const res = await page.post('/api/site/apply', { text: edited });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { outcome: string; generation: number; sha256: string; problems: unknown[] };
    const onDisk = readFileSync(file, 'utf8');
    expect(body).toEqual({ outcome: 'applied', generation: 2, problems: [], sha256: sha256(onDisk) });
    expect(g.status().config).toMatchObject({ generation: 2, sha256: sha256(onDisk) });
    expect(g.status().devices.map((d) => d.name)).toEqual(['meter-1', 'meter-2']);
  }, 60_000);
});
