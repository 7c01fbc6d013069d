// Every change of the running site takes one path (src/ops/site-changes.ts), whoever asks: the
// page's Apply, `fieldgate reload` after the seed file was edited (the SIGHUP handler's
// reloadSite), and the cloud's site_apply through interface B's command/sync/send. Each is a
// generation in <stateDir>/site/ named by its origin in site_history; the seed file is never
// written; a restart runs what was last applied; a change whose base moved is refused.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/mosquitto.js';
import { meter, RemoteRig } from './remote-config-rig.js';
import { PageClient } from './web-rig.js';

const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

describe('one path for every change of the running site', () => {
  let rig: RemoteRig;
  let page: PageClient;
  let store: string;

  beforeAll(async () => {
    rig = await RemoteRig.start([meter('meter-1', 1, 'demo-meter-1-token')], { webPort: await freePort() });
    store = join(rig.site.stateDir, 'site');
    page = new PageClient(`http://127.0.0.1:${rig.gateway?.webPort}`);
    await page.session();
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
  });

  async function shown(): Promise<{ path: string; text: string }> {
    const res = await fetch(`${page.base}/api/site`, { headers: page.headers() });
    expect(res.status).toBe(200);
    return (await res.json()) as { path: string; text: string };
  }

  async function history(): Promise<Array<Record<string, unknown>>> {
    return (await rig.command('site_history')).generations as Array<Record<string, unknown>>;
  }

  it('the page\'s Apply is a generation of the store (via page): the seed is not written, site_get shows it, a restart runs it', async () => {
    const seedBefore = readFileSync(rig.seedFile);
    const before = await shown();
    expect(before.path).toBe(join(store, 'generation-1.yaml'));
    expect(before.text).toContain('{{secret-');
    const res = await page.post('/api/site/apply', { text: before.text.replace('pollIntervalMs: 300', 'pollIntervalMs: 400') });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { outcome: string; generation: number; problems: unknown[]; sha256: string };
    expect(body).toMatchObject({ outcome: 'applied', problems: [] });
    expect(readFileSync(rig.seedFile).equals(seedBefore)).toBe(true);
    const written = readFileSync(join(store, 'generation-2.yaml'), 'utf8');
    expect(sha256(written)).toBe(body.sha256);
    expect(written).toContain('accessToken: demo-meter-1-token');
    expect(written).not.toContain('{{secret-');
    expect(statSync(join(store, 'generation-2.yaml')).mode & 0o777).toBe(0o600);
    expect((await history())[0]).toMatchObject({ generation: 2, via: 'page', outcome: 'confirmed', running: true });
    expect(await rig.command('site_get')).toMatchObject({ digest: body.sha256, generation: 2, file: join(store, 'generation-2.yaml') });

    await rig.stopGateway();
    await rig.startGateway();
    expect(await rig.command('site_get')).toMatchObject({ digest: body.sha256, generation: 2, reason: expect.stringContaining('the last confirmed (page') });
    page = new PageClient(`http://127.0.0.1:${rig.gateway?.webPort}`);
    await page.session();
  }, 120_000);

  it('a page Apply the reload refuses (a key that needs a restart) leaves no generation; one whose base the cloud moved is refused', async () => {
    const first = await shown();
    const refusedRes = await page.post('/api/site/apply', { text: first.text.replace('syncPeriodMs: 0', 'syncPeriodMs: 5000') });
    const refusedBody = (await refusedRes.json()) as { outcome: string; problems: Array<{ path: string }> };
    expect(refusedBody.outcome).toBe('refused');
    expect(refusedBody.problems.map((p) => p.path)).toEqual(['gateway.cloud.syncPeriodMs']);
    expect(existsSync(join(store, 'generation-3.yaml'))).toBe(false);

    // The cloud applies after the page showed the text: the page's edit started from an older text.
    const got = await rig.command('site_get');
    const remote = await rig.command('site_apply', { text: String(got.text).replace('pollIntervalMs: 400', 'pollIntervalMs: 500'), baseDigest: got.digest, confirmWithinS: 0 });
    expect(remote).toMatchObject({ outcome: 'applied', generation: 3 });
    const stale = await page.post('/api/site/apply', { text: first.text.replace('pollIntervalMs: 400', 'pollIntervalMs: 600') });
    const staleBody = (await stale.json()) as { outcome: string; problems: Array<{ message: string }> };
    expect(staleBody.outcome).toBe('refused');
    expect(staleBody.problems[0]?.message).toContain('the running site changed since this page showed it (generation 3, remote)');
    expect((await history()).slice(0, 2)).toMatchObject([{ generation: 3, via: 'remote', running: true }, { generation: 2, via: 'page' }]);
  }, 60_000);

  it('`fieldgate reload` after an edit of the seed takes it in as a generation (via reload); a restart runs it, not the seed again', async () => {
    writeFileSync(rig.seedFile, readFileSync(rig.seedFile, 'utf8').replace('pollIntervalMs: 300', 'pollIntervalMs: 700'));
    const seedDigest = sha256(readFileSync(rig.seedFile));
    expect(await rig.gateway?.reloadSite()).toMatchObject({ outcome: 'applied' });
    expect((await history())[0]).toMatchObject({ generation: 4, via: 'reload', outcome: 'confirmed', running: true, digest: seedDigest });
    expect(String((await rig.command('site_get')).text)).toContain('pollIntervalMs: 700');
    // Reloading the unchanged seed again changes nothing: no new generation.
    expect(await rig.gateway?.reloadSite()).toMatchObject({ outcome: 'unchanged' });
    expect((await history())[0]).toMatchObject({ generation: 4 });

    await rig.stopGateway();
    await rig.startGateway();
    expect(await rig.command('site_get')).toMatchObject({ digest: seedDigest, generation: 4, reason: expect.stringContaining('the last confirmed (reload') });
    expect((await history())[0]).toMatchObject({ generation: 4 });
  }, 120_000);
});
