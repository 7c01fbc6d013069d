// Live reload against the emulator: 100 devices on two simulated buses (odd units in gateway mode
// through fieldgate's identity, even units on links of their own), the daemon run as the service
// runs it. Change one device, add one, remove one, SIGHUP: the other 97 keep their schedule, their
// links and every report; a broken file and a fixed key are refused and change nothing; fifty
// reloads leave memory, descriptors and timers flat. Figures are printed for the closing note.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from './harness.js';
import { BUSES, deviceName, ReloadRig, type RigDevice } from './reload-rig.js';

const UNITS = 50;
const PERIOD_MS = 1000;
const base: RigDevice[] = BUSES.flatMap((bus) => Array.from({ length: UNITS }, (_, i) => ({ bus, unit: i + 1, periodMs: PERIOD_MS })));
const changed: RigDevice = { bus: 'a', unit: 2, periodMs: PERIOD_MS }; // own link
const removed: RigDevice = { bus: 'a', unit: 1, periodMs: PERIOD_MS }; // gateway mode
const added: RigDevice = { bus: 'b', unit: 51, periodMs: PERIOD_MS }; // gateway mode
const spare: RigDevice = { bus: 'b', unit: 52, periodMs: PERIOD_MS }; // own link, for the fifty reloads
const same = (x: RigDevice, y: RigDevice) => x.bus === y.bus && x.unit === y.unit;
const others = base.filter((d) => !same(d, changed) && !same(d, removed));
const afterReload: RigDevice[] = [...base.filter((d) => !same(d, removed)).map((d) => (same(d, changed) ? { ...d, extraPoint: true } : d)), added];

function metric(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `) || (labels === '' && l.startsWith(`${name} `)));
  return line === undefined ? Number.NaN : Number(line.split(' ').at(-1));
}

describe('site file reload (100 devices, emulator, two simulated buses)', () => {
  let rig: ReloadRig;

  /** Sends SIGHUP and waits for RELOADING=1 then READY=1; returns µs from the signal to READY's arrival. */
  async function hangup(): Promise<{ toReadyUs: number; toReloadingUs: number }> {
    const from = rig.datagrams.length;
    const sent = process.hrtime.bigint() / 1000n;
    process.kill(rig.pid, 'SIGHUP');
    const reloading = await waitFor(() => rig.datagrams.slice(from).find((d) => d.message.startsWith('RELOADING=1')), 60_000);
    await waitFor(() => rig.datagrams.slice(from).find((d) => d.message.startsWith('READY=1')), 120_000);
    const readyAt = process.hrtime.bigint() / 1000n;
    const monotonic = BigInt(/MONOTONIC_USEC=(\d+)/.exec(reloading.message)?.[1] ?? '0');
    return { toReadyUs: Number(readyAt - sent), toReloadingUs: Number(monotonic - sent) };
  }

  beforeAll(async () => {
    rig = await ReloadRig.start(UNITS + 2);
    rig.writeSite({ devices: base });
    rig.startGateway();
    // All 100 online, every link up, and a few reports of each in the cloud.
    let seen = 'no status';
    await waitFor(async () => {
      if (!rig.running) throw new Error('the gateway exited');
      const status = await rig.status().catch(() => undefined);
      if (!status) return undefined;
      const online = status.devices.filter((d) => d.online).length;
      const up = status.links.filter((l) => l.state === 'up').length;
      const reporting = base.filter((d) => rig.reports(d).length >= 3).length;
      seen = `${online}/${status.devices.length} online, ${up}/${status.links.length} links up, ${reporting} reporting`;
      return online === 100 && up === status.links.length && reporting === 100 ? true : undefined;
    }, 180_000).catch((err: unknown) => {
      throw new Error(`gateway not running fully: ${seen}\n${rig.output.slice(-3000)}`, { cause: err });
    });
  }, 240_000);

  afterAll(async () => {
    await rig?.close();
  });

  it('applies one changed, one added and one removed device; the other 97 lose no beat, no link and no report', async () => {
    const connectsBefore = new Map(others.map((d) => [deviceName(d), rig.connectsOf(d)]));
    const identityBefore = rig.identityConnects();
    const changedConnects = rig.connectsOf(changed);
    const statusBefore = await rig.status();
    expect(statusBefore.config).toMatchObject({ generation: 1, lastError: null });
    const windowFrom = Date.now() - 3 * PERIOD_MS;

    rig.writeSite({ devices: afterReload });
    const reloadAt = Date.now();
    const timing = await hangup();
    // Five periods of normal running after the reload, then everything queued must be out.
    await new Promise((r) => setTimeout(r, 5 * PERIOD_MS));
    await waitFor(async () => ((await rig.status()).outbox?.depth === 0 ? true : undefined), 60_000);
    const status = await rig.status();
    console.log(`reload at 100 devices: SIGHUP to RELOADING=1 ${(timing.toReloadingUs / 1000).toFixed(1)} ms, SIGHUP to READY=1 ${(timing.toReadyUs / 1000).toFixed(1)} ms`);

    expect(status.config).toMatchObject({ generation: 2, lastError: null, reloads: { applied: 1, refused: 0 } });
    expect(status.devices.map((d) => d.name)).toEqual(afterReload.map(deviceName));
    expect(status.devices.find((d) => d.name === deviceName(changed))?.points).toBe(2);
    expect(status.outbox?.dropped).toBe(0);

    let worstGap = 0;
    for (const d of others) {
      const name = deviceName(d);
      const reports = rig.reports(d);
      // Not one duplicate over the whole run.
      expect(new Set(reports.map((r) => r.seq)).size, `${name} duplicates`).toBe(reports.length);
      // No missed or doubled poll around the reload: consecutive poll times one period apart.
      const window = reports.filter((r) => r.ts >= windowFrom);
      expect(window.length, `${name} reports in the window`).toBeGreaterThanOrEqual(6);
      for (let i = 1; i < window.length; i += 1) {
        const gap = window[i].ts - window[i - 1].ts;
        worstGap = Math.max(worstGap, gap);
        const context = () => `${name} poll interval, reload at ${reloadAt}: ${rig.historyAround(d, window[i].ts)}`;
        expect(gap, context()).toBeGreaterThan(0.5 * PERIOD_MS);
        expect(gap, context()).toBeLessThanOrEqual(1.5 * PERIOD_MS);
      }
      // The same link: the cloud registered no new connect.
      expect(rig.connectsOf(d), `${name} connects`).toBe(connectsBefore.get(name));
    }
    console.log(`other 97 devices: worst poll interval around the reload ${worstGap} ms (period ${PERIOD_MS} ms)`);
    expect(rig.identityConnects()).toBe(identityBefore);
    expect(status.links.every((l) => l.reconnects === 0)).toBe(true);

    // The changed device: replaced alone, on the same link (its identity did not change), its
    // reports neither lost (outbox empty, nothing dropped) nor duplicated.
    expect(rig.connectsOf(changed)).toBe(changedConnects);
    const changedReports = rig.reports(changed);
    expect(new Set(changedReports.map((r) => r.seq)).size).toBe(changedReports.length);
    expect(rig.emulator.state.devices.get(`dev-a-2`)?.history.some((h) => h.name === 'raw')).toBe(true);
    // The removed one: offline in the cloud, nothing reported after its removal settled.
    expect(rig.emulator.state.isOnline('dev-a-1')).toBe(false);
    const removedCount = rig.reports(removed).length;
    // The added one: online and reporting.
    await waitFor(() => (rig.reports(added).length >= 3 && rig.emulator.state.isOnline('dev-b-51') ? true : undefined), 30_000);
    await new Promise((r) => setTimeout(r, 2 * PERIOD_MS));
    expect(rig.reports(removed).length).toBe(removedCount);
    const metrics = await rig.metrics();
    expect(metric(metrics, 'fieldgate_config_generation')).toBe(2);
    expect(metric(metrics, 'fieldgate_config_reloads_total', '{outcome="applied"}')).toBe(1);
  }, 300_000);

  it('a changed bus restarts with its devices only: the other bus\'s devices keep schedule and links, its own keep their links', async () => {
    const busA = afterReload.filter((d) => d.bus === 'a');
    const busB = afterReload.filter((d) => d.bus === 'b');
    const connectsBefore = new Map(afterReload.map((d) => [deviceName(d), rig.connectsOf(d)]));
    const windowFrom = Date.now() - 2 * PERIOD_MS;
    const before = await rig.status();
    rig.writeSite({ devices: afterReload, busBTimeoutMs: 1500 });
    await hangup();
    await new Promise((r) => setTimeout(r, 4 * PERIOD_MS));
    await waitFor(async () => {
      const status = await rig.status();
      return status.outbox?.depth === 0 && busB.every((d) => status.devices.find((s) => s.name === deviceName(d))?.online) ? true : undefined;
    }, 60_000);
    expect((await rig.status()).config?.generation).toBe((before.config?.generation ?? 0) + 1);
    for (const d of busA) {
      const window = rig.reports(d).filter((r) => r.ts >= windowFrom);
      // Below two periods: no slot of the schedule was lost (a late cycle on a busy machine is not a lost one).
      for (let i = 1; i < window.length; i += 1) expect(window[i].ts - window[i - 1].ts, `${deviceName(d)} poll interval`).toBeLessThan(1.9 * PERIOD_MS);
      expect(rig.connectsOf(d), `${deviceName(d)} connects`).toBe(connectsBefore.get(deviceName(d)));
    }
    // Bus b's devices were replaced, and report again without duplicates; their cloud identity did
    // not change, so the own-link ones kept their links (no new connect).
    for (const d of busB) {
      const reports = rig.reports(d);
      expect(new Set(reports.map((r) => r.seq)).size, `${deviceName(d)} duplicates`).toBe(reports.length);
    }
    for (const d of busB.filter((x) => x.unit % 2 === 0)) expect(rig.connectsOf(d), `${deviceName(d)} connects`).toBe(connectsBefore.get(deviceName(d)));
  }, 180_000);

  it('refuses a broken file whole: nothing changes, one error line lists every problem, status says so', async () => {
    const before = await rig.status();
    rig.writeSite({ devices: afterReload, busBTimeoutMs: 1500, garbage: 'buses: [unclosed\n' });
    await hangup();
    const status = await rig.status();
    expect(status.config?.generation).toBe(before.config?.generation);
    expect(status.config?.sha256).toBe(before.config?.sha256);
    expect(status.config?.lastError).toMatch(/site\.yaml:\d+:\d+.*YAML syntax error/);
    expect(status.devices.map((d) => d.name)).toEqual(before.devices.map((d) => d.name));
    const refusals = rig.output.split('\n').filter((l) => l.includes('site file reload refused'));
    expect(refusals).toHaveLength(1);
    expect(JSON.parse(refusals[0])).toMatchObject({ level: 50, problems: expect.arrayContaining([expect.stringMatching(/site\.yaml:\d+:\d+: YAML syntax error/)]) });
    expect(metric(await rig.metrics(), 'fieldgate_config_last_reload_refused')).toBe(1);
  }, 120_000);

  it('fieldgate reload: refuses a broken file without signalling, names a key that cannot change live, answers a no-op', async () => {
    const env = { PATH: process.env.PATH };
    const broken = await runCli(['reload', '--config', rig.sitePath], env);
    expect(broken.code).toBe(78);
    expect(broken.err).toMatch(/YAML syntax error[\s\S]*nothing sent to the daemon/);

    rig.writeSite({ devices: afterReload, busBTimeoutMs: 1500, stateDir: `${rig.dir}/other-state` });
    // The new file names another state directory: the CLI finds the daemon by --pid.
    const fixedKey = await runCli(['reload', '--config', rig.sitePath, '--pid', String(rig.pid)], env);
    expect(fixedKey.code).toBe(78);
    expect(fixedKey.err).toMatch(/gateway\.stateDir: cannot change while fieldgate runs/);
    expect((await rig.status()).config).toMatchObject({ generation: 3, lastError: expect.stringContaining('gateway.stateDir') });

    rig.writeSite({ devices: afterReload, busBTimeoutMs: 1500 });
    const noop = await runCli(['reload', '--config', rig.sitePath], env);
    expect(noop.err).toBe('');
    expect(noop.out).toMatch(/no changes; generation 3/);
    expect(noop.code).toBe(0);
    expect((await rig.status()).config).toMatchObject({ generation: 3, lastError: null });
  }, 120_000);

  it('fifty reloads in a row keep memory, descriptors and timers flat', async () => {
    // Heap in use, read after the daemon's next full (major) collection if one comes within
    // MAJOR_GC_WAIT_MS: then it is what is live, not garbage. A quiet Node 24 may run no major
    // collection for minutes, so without one the least heap seen over the sampling window (after
    // its scavenges) stands in; both samples follow the same rule and the log says which was used.
    const MAJOR_GC_WAIT_MS = 30_000;
    const majors = (text: string) => metric(text, 'fieldgate_nodejs_gc_duration_seconds_count', '{kind="major"}');
    const sample = async () => {
      const from = majors(await rig.metrics());
      const afterMajor = await waitFor(async () => {
        const t = await rig.metrics();
        return majors(t) > from ? t : undefined;
      }, MAJOR_GC_WAIT_MS).catch(() => undefined);
      // Timers and descriptors come and go with the traffic (ack batching, linger, pacing): what
      // stays is the least seen over a few seconds; a leak raises that too.
      let timers = Number.POSITIVE_INFINITY;
      let fds = Number.POSITIVE_INFINITY;
      let heap = afterMajor === undefined ? Number.POSITIVE_INFINITY : metric(afterMajor, 'fieldgate_nodejs_heap_size_used_bytes');
      for (let i = 0; i < 10; i += 1) {
        const text = await rig.metrics();
        timers = Math.min(timers, metric(text, 'fieldgate_nodejs_active_resources', '{type="Timeout"}'));
        if (afterMajor === undefined) heap = Math.min(heap, metric(text, 'fieldgate_nodejs_heap_size_used_bytes'));
        fds = Math.min(fds, rig.processFigures().fds);
        await new Promise((r) => setTimeout(r, 300));
      }
      return { rssKb: rig.processFigures().rssKb, fds, timers, heap, heapAfter: afterMajor === undefined ? 'least seen' : 'major GC' };
    };
    const reloadTimes: number[] = [];
    const cycle = async (i: number) => {
      // Odd rounds add a device with its own link, even rounds remove it again.
      rig.writeSite({ devices: i % 2 === 1 ? [...afterReload, spare] : afterReload, busBTimeoutMs: 1500 });
      reloadTimes.push((await hangup()).toReadyUs / 1000);
      // Once, while it is in: wait until the spare has reported, so the check below has reports
      // to look at however fast the reloads come (a reload cycle can be shorter than its period).
      if (i === 5) await waitFor(() => (rig.reports(spare).length > 0 ? true : undefined), 60_000);
    };
    for (let i = 1; i <= 4; i += 1) await cycle(i); // warm-up: code paths compiled, pools sized
    const before = await sample();
    for (let i = 5; i <= 54; i += 1) await cycle(i);
    await new Promise((r) => setTimeout(r, 2 * PERIOD_MS));
    const after = await sample();
    const status = await rig.status();
    const sorted = [...reloadTimes].sort((x, y) => x - y);
    console.log(`fifty reloads: RSS ${before.rssKb} -> ${after.rssKb} kB, heap ${(before.heap / 1e6).toFixed(1)} -> ${(after.heap / 1e6).toFixed(1)} MB (${before.heapAfter} / ${after.heapAfter}), fds ${before.fds} -> ${after.fds}, timers ${before.timers} -> ${after.timers}; SIGHUP to READY median ${sorted[Math.floor(sorted.length / 2)].toFixed(1)} ms, max ${sorted.at(-1)?.toFixed(1)} ms`);
    expect(status.config?.generation).toBe(3 + 54);
    // The device added and removed 27 times over: whatever of it reached the cloud arrived once.
    const spareReports = rig.reports(spare);
    expect(spareReports.length).toBeGreaterThan(0);
    expect(new Set(spareReports.map((r) => r.seq)).size).toBe(spareReports.length);
    expect(status.devices).toHaveLength(afterReload.length);
    // Growth bounds, not timing: a leak of one socket, timer or device's parts per reload would pass them fifty times over.
    expect(after.fds - before.fds).toBeLessThanOrEqual(5);
    expect(after.timers - before.timers).toBeLessThanOrEqual(10);
    expect(after.rssKb - before.rssKb).toBeLessThan(40 * 1024);
    expect(after.heap - before.heap).toBeLessThan(25 * 1024 * 1024);
  }, 900_000);
});
