// RemoteSite over SiteChanges with fakes (store in memory, reload and reader faked, ManualClock):
// the window's automatic rollback, a confirm refused while a changed bus is down, a base moved by
// the page's Apply, a second change refused while one runs, the seed reloaded on the box as a
// generation of its own, and the box's changes waiting their turn behind the cloud's.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../../src/core/config/config.js';
import { chooseAtStart, type GenerationBook } from '../../../src/core/config/site-generations.js';
import { DEFAULT_SELF_IDENTITY } from '../../../src/core/config/self-identity.js';
import { RemoteSite, type SiteStorePort } from '../../../src/ops/remote-site.js';
import { SiteChanges } from '../../../src/ops/site-changes.js';
import type { ReloadCandidate, ReloadResult } from '../../../src/ops/gateway-handle.js';
import { silentLogger } from '../../../src/ops/log.js';
import { checkConfig, parseSiteText } from '../../../src/ops/site-file.js';
import { ManualClock } from '../../helpers/manual-clock.js';

const sha = (t: string) => createHash('sha256').update(t).digest('hex');
const SEED = `gateway:
  stateDir: /tmp/fg-remote-unit
  health: { enabled: false }
  cloud: { mqttUrl: "mqtt://127.0.0.1:1883", projectKey: pk-secret, identity: { accessToken: gw-token } }
buses:
  - { name: a, kind: tcp, host: 127.0.0.1, port: 5020 }
devices:
  - { name: m1, bus: a, unitId: 1, points: [{ id: p, table: holding, address: 0 }] }
`;

function configOf(text: string): Config | undefined {
  const parsed = parseSiteText(text, 'x.yaml');
  return parsed.raw === undefined ? undefined : checkConfig(parsed.raw, {}).config;
}

function rig(options: { holdReload?: Promise<void> } = {}) {
  const clock = new ManualClock();
  const files = new Map<string, string>();
  const store: SiteStorePort = {
    save: () => undefined, textPath: (g) => `/store/generation-${g}.yaml`, scratchPath: () => '/store/check.yaml',
    writeText: (g, t) => void files.set(`/store/generation-${g}.yaml`, String(t)), readText: (g) => files.get(`/store/generation-${g}.yaml`),
    removeText: (g) => void files.delete(`/store/generation-${g}.yaml`), writeScratch: (p, t) => void files.set(p, t), removeScratch: (p) => void files.delete(p),
  };
  files.set('/store/generation-1.yaml', SEED);
  let running = configOf(SEED)!;
  let seed = SEED;
  const busUp = new Map([['a', true]]);
  const reloads: string[] = [];
  const reload = async (load: () => ReloadCandidate | Promise<ReloadCandidate>): Promise<ReloadResult> => {
    await options.holdReload;
    const candidate = await load();
    if (!candidate.config) return { outcome: 'refused', generation: 0, problems: [...candidate.issues] };
    running = candidate.config;
    reloads.push(candidate.sha256 ?? '');
    return { outcome: 'applied', generation: 0, problems: [] };
  };
  const book: GenerationBook = chooseAtStart(undefined, sha(SEED), clock.wallNow()).book;
  const changes = new SiteChanges({
    store, book, startReason: 'seed', historyKept: 20, current: () => running, reload,
    readFile: async (path) => {
      const config = configOf(files.get(path) ?? '');
      return config ? { config, issues: [] } : { issues: [{ path, message: 'bad' }] };
    },
    readSeed: () => ({ path: '/etc/site.yaml', bytes: Buffer.from(seed) }),
    addressHolders: () => new Map(), busUp: (name) => busUp.get(name) ?? false, linkUp: () => true,
    time: clock, log: silentLogger(), changed: () => undefined,
  });
  const site = new RemoteSite({ changes, current: () => running, settings: DEFAULT_SELF_IDENTITY.site, maxBytes: 1 << 20, time: clock, log: silentLogger() });
  const editSeed = (text: string) => { seed = text; };
  return { site, changes, clock, files, busUp, reloads, running: () => running, editSeed };
}

const flush = () => new Promise((r) => setImmediate(r));

async function getText(site: RemoteSite): Promise<{ text: string; digest: string }> {
  const got = await site.handle('site_get', {});
  if (!got.ok) throw new Error(got.error.message);
  return got.result as { text: string; digest: string };
}

describe('RemoteSite', () => {
  it('rolls an unconfirmed generation back when its window ends, to the text before it', async () => {
    const r = rig();
    const { text, digest } = await getText(r.site);
    expect(text).toContain('accessToken: {{secret-');
    const applied = await r.site.handle('site_apply', { text: text.replace('port: 5020', 'port: 5030'), baseDigest: digest, confirmWithinS: 10 });
    expect(applied).toMatchObject({ ok: true, result: { outcome: 'awaiting_confirm', generation: 2, mustComeUp: { buses: ['a'] } } });
    expect(r.running().site.buses[0]).toMatchObject({ port: 5030 });
    r.clock.advance(9_999);
    await flush();
    expect(r.site.status()).toMatchObject({ generation: 2, state: 'awaiting_confirm' });
    r.clock.advance(1);
    for (let i = 0; i < 5; i++) await flush();
    expect(r.site.status()).toMatchObject({ generation: 1, state: 'confirmed', lastRollback: expect.stringContaining('not confirmed within 10 s') });
    expect(r.running().site.buses[0]).toMatchObject({ port: 5020 });
    expect(r.reloads.at(-1)).toBe(sha(SEED));
  });

  it('refuses a confirm while a changed bus is down, takes it once the bus is up', async () => {
    const r = rig();
    const { text, digest } = await getText(r.site);
    await r.site.handle('site_apply', { text: text.replace('port: 5020', 'port: 5030'), baseDigest: digest, confirmWithinS: 60 });
    r.busUp.set('a', false);
    expect(await r.site.handle('site_confirm', {})).toMatchObject({ ok: true, result: { outcome: 'refused', problems: [{ message: expect.stringContaining('not up yet: bus a') }] } });
    r.busUp.set('a', true);
    expect(await r.site.handle('site_confirm', {})).toMatchObject({ ok: true, result: { outcome: 'confirmed', generation: 2 } });
    r.clock.advance(120_000);
    await flush();
    expect(r.site.status()).toMatchObject({ generation: 2, state: 'confirmed' });
  });

  it('refuses an apply whose base moved since site_get (the page applied meanwhile); nothing is kept of it', async () => {
    const r = rig();
    const { text, digest } = await getText(r.site);
    expect(await r.changes.apply({ text: SEED.replace('unitId: 1', 'unitId: 7'), via: 'page', label: 'page' })).toMatchObject({ outcome: 'applied', generation: 2 });
    const answer = await r.site.handle('site_apply', { text: text.replace('port: 5020', 'port: 5030'), baseDigest: digest, confirmWithinS: 0 });
    expect(answer).toMatchObject({ ok: true, result: { outcome: 'refused', problems: [{ message: expect.stringContaining('baseDigest is not the running site') }] } });
    expect(r.running().site.devices[0]).toMatchObject({ unitId: 7 });
    expect(await r.site.handle('site_history', {})).toMatchObject({ ok: true, result: { running: 2, generations: [{ generation: 2, via: 'page', outcome: 'confirmed' }, { generation: 1, via: 'seed' }] } });
    expect([...r.files.keys()].sort()).toEqual(['/store/generation-1.yaml', '/store/generation-2.yaml']);
  });

  it('refuses a second change while one runs, and a rollback to a generation that is running', async () => {
    let release = () => undefined as void;
    const r = rig({ holdReload: new Promise<void>((resolve) => { release = resolve; }) });
    const { text, digest } = await getText(r.site);
    const first = r.site.handle('site_apply', { text: text.replace('port: 5020', 'port: 5030'), baseDigest: digest, confirmWithinS: 0 });
    await flush();
    expect(await r.site.handle('site_apply', { text, baseDigest: digest, confirmWithinS: 0 })).toMatchObject({ ok: true, result: { outcome: 'refused', problems: [{ message: expect.stringContaining('another site change is in progress') }] } });
    expect(await r.site.handle('site_rollback', { generation: 1 })).toMatchObject({ ok: true, result: { outcome: 'refused' } });
    release();
    expect(await first).toMatchObject({ ok: true, result: { outcome: 'applied', generation: 2 } });
    expect(await r.site.handle('site_rollback', { generation: 2 })).toMatchObject({ ok: true, result: { outcome: 'refused', problems: [{ message: 'generation 2 is the one running' }] } });
    expect(await r.site.handle('site_rollback', { generation: 1 })).toMatchObject({ ok: true, result: { outcome: 'applied', generation: 3, from: 1 } });
    expect(r.running().site.buses[0]).toMatchObject({ port: 5020 });
  });

  it('a reload of the edited seed on the box is a generation of its own: site_get shows it, an apply against the old digest is refused, an open window ends', async () => {
    const r = rig();
    const { text, digest } = await getText(r.site);
    await r.site.handle('site_apply', { text: text.replace('port: 5020', 'port: 5030'), baseDigest: digest, confirmWithinS: 60 });
    r.editSeed(SEED.replace('unitId: 1', 'unitId: 7'));
    expect(await r.changes.reloadSeed()).toMatchObject({ outcome: 'applied' });
    const got = await r.site.handle('site_get', {});
    expect(got).toMatchObject({ ok: true, result: { generation: 3, state: 'confirmed', text: expect.stringContaining('unitId: 7') } });
    const history = await r.site.handle('site_history', {});
    expect(history).toMatchObject({ ok: true, result: { generations: [{ generation: 3, via: 'reload' }, { generation: 2, outcome: 'rolled_back', reason: 'replaced by generation 3 (reload) before it was confirmed' }, { generation: 1 }] } });
    expect(await r.site.handle('site_apply', { text, baseDigest: digest, confirmWithinS: 0 })).toMatchObject({ ok: true, result: { outcome: 'refused', problems: [{ message: expect.stringContaining('baseDigest is not the running site') }] } });
    r.clock.advance(120_000);
    await flush();
    expect(r.running().site.devices[0]).toMatchObject({ unitId: 7 });
  });

  it('the box\'s changes wait their turn behind the cloud\'s, the cloud\'s are refused while one runs', async () => {
    let release = () => undefined as void;
    const r = rig({ holdReload: new Promise<void>((resolve) => { release = resolve; }) });
    const { text, digest } = await getText(r.site);
    const remote = r.site.handle('site_apply', { text: text.replace('port: 5020', 'port: 5030'), baseDigest: digest, confirmWithinS: 0 });
    await flush();
    r.editSeed(SEED.replace('unitId: 1', 'unitId: 9'));
    const reload = r.changes.reloadSeed();
    release();
    expect(await remote).toMatchObject({ ok: true, result: { outcome: 'applied', generation: 2 } });
    expect(await reload).toMatchObject({ outcome: 'applied' });
    expect(r.changes.status()).toMatchObject({ generation: 3, state: 'confirmed' });
    expect(r.running().site.devices[0]).toMatchObject({ unitId: 9 });
    expect(r.running().site.buses[0]).toMatchObject({ port: 5020 });
  });
});
