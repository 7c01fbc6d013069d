// A start that could not open its outbox file (the state directory unusable at start) sees none of
// the previous run's rows. When the file is taken up, the rows of a device the site no longer has
// are dropped and counted at once, by the rule the start applies (one line, `droppedByDevice`),
// instead of staying queued until the next start; the kept device's old rows are delivered. The
// daemon runs in this process against the emulator and the simulator, its state directory a
// read-only bind mount of the previous run's (as after a remount read-only), made writable again.
// Needs root (mount).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openOutbox } from '../../src/cloud/outbox/open-outbox.js';
import { attributesReport } from '../../src/cloud/mqtt/topics.js';
import { startGateway, type GatewayHandle } from '../../src/main.js';
import { captureLog } from '../helpers/capture-log.js';
import { meterDevice, startSite, waitFor, type Site } from './harness.js';
import { canMount } from './storage-rig.js';
import { skipUnless } from '../helpers/skips.js';

const mountable = canMount();

const TOKEN = 'demo-meter-1-token';
const KEPT_OLD = [901, 902, 903, 904, 905];
const GONE_OLD = 4;

/** The previous run's outbox, left with rows of the kept meter and of one the site no longer has. */
function previousRun(dir: string): void {
  mkdirSync(dir);
  const outbox = openOutbox('memory-first', { path: join(dir, 'outbox.sqlite'), durableAfterMs: 1000 });
  const t0 = Date.now() - 60_000;
  KEPT_OLD.forEach((v, i) => outbox.append('meter-1', attributesReport({ voltage: v }), t0 + i));
  for (let i = 0; i < GONE_OLD; i += 1) outbox.append('gone-meter', attributesReport({ voltage: 1 }), t0 + i);
  outbox.close();
}

describe('a start without its outbox file, then the file taken up', skipUnless(mountable, 'a read-only bind mount needs root (CAP_SYS_ADMIN)'), () => {
  let site: Site;
  let gateway: GatewayHandle | undefined;
  let view: string | undefined;

  beforeEach(async () => {
    site = await startSite();
  }, 30_000);

  afterEach(async () => {
    await gateway?.stop();
    gateway = undefined;
    if (view) {
      execFileSync('umount', ['-l', view]);
      rmSync(view, { recursive: true, force: true });
      view = undefined;
    }
    await site?.close();
  });

  it('drops and counts the queue of a device no longer in the site when the file is taken up; the kept device\'s old rows are delivered', async () => {
    const previous = join(site.stateDir, 'previous');
    previousRun(previous);
    const stateDir = mkdtempSync(join(tmpdir(), 'fg-ro-state-'));
    view = stateDir;
    execFileSync('mount', ['--bind', previous, stateDir]);
    execFileSync('mount', ['-o', 'remount,bind,ro', stateDir]);
    const base = site.config([meterDevice('meter-1', 1, TOKEN)]);
    const config = { ...base, gateway: { ...base.gateway, stateDir, cloud: { ...base.gateway.cloud, outbox: { ...base.gateway.cloud.outbox, storageRetryMs: 200 } } } };
    const capture = captureLog();
    const g = await startGateway(config, { logger: capture.log, env: {} });
    gateway = g;
    await waitFor(() => (g.status().outbox?.storage?.state === 'failing' ? true : undefined), 20_000);
    expect(capture.messages('queued reports of devices no longer in the site dropped')).toEqual([]);

    execFileSync('mount', ['-o', 'remount,bind,rw', stateDir]);
    await waitFor(() => (g.status().outbox?.storage?.state === 'ok' ? true : undefined), 30_000);
    const line = await waitFor(() => capture.messages('queued reports of devices no longer in the site dropped')[0], 20_000);
    expect(line).toMatchObject({ level: 40, total: GONE_OLD, byDevice: { 'gone-meter': GONE_OLD } });

    // The kept meter's old rows go out after its new ones; nothing is left queued.
    const device = site.emulator.state.deviceByToken(TOKEN);
    const oldArrived = () => KEPT_OLD.filter((v) => device?.history.some((h) => h.name === 'voltage' && h.value === v)).length;
    await waitFor(() => (oldArrived() === KEPT_OLD.length ? true : undefined), 30_000);
    const drained = await waitFor(() => (g.status().outbox?.depth === 0 ? g.status().outbox : undefined), 30_000);
    expect(drained).toMatchObject({ depth: 0, dropped: GONE_OLD, droppedByDevice: { 'gone-meter': GONE_OLD } });
    expect(capture.messages('queued reports of devices no longer in the site dropped')).toHaveLength(1);
  }, 120_000);
});
