// The hostile reload storm (issue 39): the daemon as a child process (real CLI, site file) with a
// share on bus a and the commissioning page on, reloaded every 0.3 s for 30 s (SIGHUP after each
// rewrite of the site file). The reloads add, remove and replace devices of the shared bus, change
// the share's block (which restarts the share and drops its clients), restart the bus itself and
// now and then break the file. Meanwhile share clients keep pipelined reads in the bus queue (some
// reconnecting all the time) and the page's read API holds reads in the queue (some cut off
// mid-way). Each unit behind the bus answers 20 ms late, so requests really wait. Afterwards, each waited for
// with a generous deadline: every reload was answered, the bus queue drains, the device that
// stayed kept polling and never found the queue full, no value through the share or the page was
// wrong, /healthz is 200 and SIGTERM exits 0.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ConfigStateFile } from '../../src/ops/config-state.js';
import type { GatewayStatus } from '../../src/ops/status.js';
import { waitFor } from '../helpers/wait.js';
import { freePort } from '../helpers/mosquitto.js';
import { ReloadRig, type RigDevice, type SiteOptions } from './reload-rig.js';
import { PageClient } from './web-rig.js';
import { PageReaders } from './storm-page-readers.js';
import { ShareTraffic, sleep, type Counter } from './storm-traffic.js';

const STORM_MS = 30_000;
const RELOAD_EVERY_MS = 300;
/** Each unit of bus a answers this late: requests wait their turn in the bus queue. */
const ANSWER_DELAY_MS = 20;
const PERIOD_MS = 200;
const PAGE_MAX_PENDING = 32;
/** The larger of the two share blocks' maxQueued. */
const SHARE_MAX_QUEUED = 64;
const SHARED_UNITS = [1, 2, 3];
/** The page's cut-off reads are of this unit only (no device, no share client): its line counts what of them was sent. */
const ABANDONED_UNIT = 4;
/** A generous deadline for each thing waited for (a busy 2-core box). */
const DEADLINE_MS = 60_000;

const stayed: RigDevice = { bus: 'a', unit: 1, periodMs: PERIOD_MS }; // gateway mode
const replaced = (extraPoint: boolean): RigDevice => ({ bus: 'a', unit: 2, periodMs: PERIOD_MS, extraPoint }); // own link
const comesAndGoes: RigDevice = { bus: 'a', unit: 3, periodMs: PERIOD_MS }; // gateway mode
const otherBus: RigDevice = { bus: 'b', unit: 1, periodMs: 1000 };

/** Two share blocks the storm switches between (each switch restarts the share), and one a reload refuses. */
const shareBlock = (port: number, variant: number, refused: boolean) => {
  if (refused) return `{ port: ${port}, maxQueued: 600 }`; // over its bound of 500
  return variant === 0
    ? `{ port: ${port}, maxClients: 16, maxQueued: ${SHARE_MAX_QUEUED}, maxQueueWaitMs: 5s }`
    : `{ port: ${port}, maxClients: 16, maxQueued: 24, maxQueueWaitMs: 400ms, cacheMs: 300, lineShare: 0.5 }`;
};

/** `broken`: a file that is no YAML (read in the worker thread), or one with a value out of bounds (read in slices). */
interface StormState { withThird: boolean; extraPoint: boolean; shareVariant: number; slowBus: boolean; broken?: 'yaml' | 'value' }

/**
 * Round `i` of the storm: add a device, change the share, replace a device, remove it, replace and
 * change the share at once, break the file, restart the whole bus (its timeout changed).
 */
function next(state: StormState, i: number): StormState {
  const { broken: _, ...s } = state;
  switch (i % 7) {
    case 0: case 3: return { ...s, withThird: !s.withThird };
    case 1: return { ...s, shareVariant: 1 - s.shareVariant };
    case 2: return { ...s, extraPoint: !s.extraPoint };
    case 4: return { ...s, extraPoint: !s.extraPoint, shareVariant: 1 - s.shareVariant };
    case 5: return { ...s, broken: i % 14 === 5 ? 'yaml' : 'value' };
    default: return { ...s, slowBus: !s.slowBus };
  }
}

describe('hostile: a reload storm while share clients and the page hold requests in the queue', () => {
  let rig: ReloadRig | undefined;
  afterAll(async () => {
    await rig?.close();
  });

  it('every reload answered, the queue drains, polls never refused, no wrong value, SIGTERM exits 0', async () => {
    rig = await ReloadRig.start(ABANDONED_UNIT);
    const r = rig;
    const [sharePort, webPort] = [await freePort(), await freePort()];
    const sim = r.simulator('a');
    // Each unit counts from its own start: an answer of another unit stands out.
    for (const unit of [...SHARED_UNITS, ABANDONED_UNIT]) {
      sim.addDynamic(unit, { table: 'holding', address: 5, type: 'uint32', counter: { start: unit * 1_000_000, perSecond: 100 } });
      sim.setFault(unit, { slowMs: ANSWER_DELAY_MS });
    }
    const counter: Counter = {
      start: (unit) => unit * 1_000_000,
      now: (unit) => { const [high, low] = sim.getRegisters(unit, 'holding', 5, 2); return high! * 65536 + low!; },
    };
    const site = (s: StormState): SiteOptions => ({
      devices: [stayed, replaced(s.extraPoint), ...(s.withThird ? [comesAndGoes] : []), otherBus],
      shareA: shareBlock(sharePort, s.shareVariant, s.broken === 'value'),
      busATimeoutMs: s.slowBus ? 1500 : 1000,
      web: `{ port: ${webPort} }`,
      identityCommands: `{ readsPerMinute: 6000, maxPending: ${PAGE_MAX_PENDING} }`,
      ...(s.broken === 'yaml' ? { garbage: 'buses: [unclosed\n' } : {}),
    });
    let state: StormState = { withThird: false, extraPoint: false, shareVariant: 0, slowBus: false };
    r.writeSite(site(state));
    r.startGateway();
    const status = (): Promise<GatewayStatus> => r.status();
    const busA = (s: GatewayStatus) => s.buses.find((b) => b.name === 'a')!;
    const polledStayed = (s: GatewayStatus) => s.devices.find((d) => d.name === 'd-a-1')?.cyclesWithValues ?? 0;
    await waitFor(async () => {
      if (!r.running) throw new Error(`the gateway exited:\n${r.output.slice(-3000)}`);
      const s = await status().catch(() => undefined);
      return s !== undefined && polledStayed(s) >= 3 && s.shares?.[0]?.state === 'listening';
    }, { timeoutMs: DEADLINE_MS, what: 'the gateway polling with its share listening' });

    const before = r.processFigures();
    const page = new PageClient(`http://127.0.0.1:${webPort}`);
    await page.session();
    const share = new ShareTraffic(sharePort, counter, SHARED_UNITS);
    share.keepQueued(4, 8);
    share.churn(3, 8, 60);
    const readers = new PageReaders(webPort, page, counter, SHARED_UNITS, ABANDONED_UNIT);
    readers.start(4, 3, 40);

    // The queue through the storm, as /status shows it. A restarted bus counts from 0 again: the
    // totals add up what each bus had counted when last seen (a lower bound).
    let deepest = 0;
    let queueRejects = 0;
    const totals = { cancelled: 0, expired: 0 };
    const seen = { cancelled: 0, expired: 0 };
    const count = (s: GatewayStatus) => {
      const bus = busA(s);
      deepest = Math.max(deepest, bus.queueDepth);
      queueRejects = Math.max(queueRejects, bus.queueRejects ?? 0);
      for (const key of ['cancelled', 'expired'] as const) {
        const now = bus[key] ?? 0;
        totals[key] += now >= seen[key] ? now - seen[key] : now;
        seen[key] = now;
      }
    };
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const s = await status().catch(() => undefined);
        if (s) count(s);
        await sleep(100);
      }
    })();

    let hangups = 0;
    const stormStart = Date.now();
    for (let i = 0; Date.now() - stormStart < STORM_MS; i += 1) {
      if (!r.running) throw new Error(`the gateway exited during the storm:\n${r.output.slice(-3000)}`);
      state = next(state, i);
      r.writeSite(site(state));
      process.kill(r.pid, 'SIGHUP');
      hangups += 1;
      await sleep(RELOAD_EVERY_MS);
    }
    // The storm ends on a file that stands: the device that comes and goes is in, the share's first block.
    state = { withThird: true, extraPoint: false, shareVariant: 0, slowBus: false };
    r.writeSite(site(state));
    process.kill(r.pid, 'SIGHUP');
    hangups += 1;
    await Promise.all([share.stop(), readers.stop()]);
    const stormEnd = Date.now();

    // Every SIGHUP got its reload, and every reload its answer (none hung).
    const statePath = join(r.dir, 'state', 'config-state.json');
    const answered = await waitFor(() => {
      if (!existsSync(statePath)) return undefined;
      const file = JSON.parse(readFileSync(statePath, 'utf8')) as ConfigStateFile;
      return file.attempt === hangups ? file : undefined;
    }, { timeoutMs: DEADLINE_MS, what: `${hangups} reloads answered` });
    const answeredMs = Date.now() - stormEnd;
    const { reloads } = answered;
    expect(reloads.applied + reloads.unchanged + reloads.refused + reloads.failed).toBe(hangups);
    expect(reloads.failed, 'reloads that failed while applying').toBe(0);
    expect(answered.outcome).not.toBe('refused');
    // Each on its one log line too (the pipe may bring the last ones a moment after the file).
    const logLines = () => r.output.split('\n').flatMap((l) => { try { return [JSON.parse(l) as { msg?: string }]; } catch { return []; } });
    const outcomes = ['site file reloaded', 'site file reload: nothing changed', 'site file reload refused: nothing changed'];
    const outcomeLines = () => logLines().filter((l) => outcomes.includes(l.msg ?? ''));
    await waitFor(() => outcomeLines().length >= hangups, { timeoutMs: DEADLINE_MS, what: `${hangups} reload outcomes logged` });
    expect(outcomeLines()).toHaveLength(hangups);

    // The bus queue drains; the share's requests have all left it.
    const drained = await waitFor(async () => {
      const s = await status().catch(() => undefined);
      return s && busA(s).queueDepth === 0 && s.shares?.[0]?.queued === 0 ? s : undefined;
    }, { timeoutMs: DEADLINE_MS, intervalMs: 20, what: 'the bus queue drained' });
    const drainMs = Date.now() - stormEnd;
    const healthz = await waitFor(async () => {
      const res = await fetch(`http://127.0.0.1:${r.healthPort}/healthz`).catch(() => undefined);
      return res?.status === 200 ? res : undefined;
    }, { timeoutMs: DEADLINE_MS, what: '/healthz 200' });
    expect(healthz.status).toBe(200);
    // The device that stayed polls on after the storm.
    const polledAfter = polledStayed(drained);
    await waitFor(async () => polledStayed(await status()) >= polledAfter + 3, { timeoutMs: DEADLINE_MS, what: 'd-a-1 polling after the storm' });
    const final = await status();
    expect(final.devices.map((d) => d.name).sort()).toEqual(['d-a-1', 'd-a-2', 'd-a-3', 'd-b-1']);

    // Nothing of the storm holds a place: the page answers as many reads at once as it allows (an
    // abandoned read that kept its place would make one of them busy), and a fresh share client
    // gets values for a full queue of reads.
    expect(await readers.burst(PAGE_MAX_PENDING)).toEqual(Array.from({ length: PAGE_MAX_PENDING }, () => 200));
    await waitFor(async () => (await status()).shares?.[0]?.clients === 0, { timeoutMs: DEADLINE_MS, what: 'every share client gone' });
    expect(await share.probe([1, 1, 2, 2, 1, 1, 2, 2])).toBe(8);

    // Nothing of the storm's connections stays open in the daemon; no abort signal collected listeners.
    const after = await waitFor(() => { const now = r.processFigures(); return now.fds <= before.fds + 10 ? now : undefined; },
      { timeoutMs: DEADLINE_MS, intervalMs: 200, what: `descriptors back near ${before.fds}` });
    expect(r.output).not.toContain('MaxListenersExceededWarning');

    // Polls never found the queue full; nothing was ever refused by the bus queue.
    expect(r.output).not.toContain('queue is full');
    expect(logLines().filter((l) => l.msg === 'bus queue full')).toEqual([]);
    sampling = false;
    await sampler;
    count(final);
    expect(queueRejects, 'requests refused by a full bus queue').toBe(0);
    // As far as the samples saw: the share's requests within its cap, beside the page's and one poll per device.
    expect(deepest).toBeLessThanOrEqual(SHARE_MAX_QUEUED + PAGE_MAX_PENDING + 3);
    // No wrong value through the share or the page.
    expect(share.wrong.slice(0, 20)).toEqual([]);
    expect(readers.wrong.slice(0, 20)).toEqual([]);
    // The storm did what it says: reloads applied, requests answered and cut off on both paths.
    expect(reloads.applied).toBeGreaterThan(10);
    expect(share.figures.values).toBeGreaterThan(0);
    expect(readers.figures.values).toBeGreaterThan(0);
    expect(readers.figures.abandoned).toBeGreaterThan(0);
    expect(totals.cancelled).toBeGreaterThan(0);
    const f = share.figures;
    const p = readers.figures;
    // The line heard no more reads of the abandoned unit than the page asked for; the rest of the cut-off ones left the queue unsent.
    const abandonedOnLine = sim.counters(ABANDONED_UNIT).requests - p.abandonedUnitValues;
    expect(abandonedOnLine).toBeLessThanOrEqual(p.abandoned);
    console.log(`reload storm: ${hangups} SIGHUPs, reloads ${reloads.applied} applied / ${reloads.unchanged} unchanged / ${reloads.refused} refused / ${reloads.failed} failed; `
      + `share ${f.connections} connections (${f.refusedConnections} refused), ${f.sent} requests: ${f.values} answered with values, busy ${f.exceptions[6] ?? 0}, path unavailable ${f.exceptions[10] ?? 0}, no response ${f.exceptions[11] ?? 0}, cut off ${f.cutOff}; `
      + `bus cancelled >= ${totals.cancelled}, expired >= ${totals.expired}; page ${p.sent} reads: ${p.values} answered, ${p.abandoned} cut off (${p.abandoned - abandonedOnLine} of them never sent), refused ${JSON.stringify(p.refused)} ${JSON.stringify([...readers.refusals.values()])}; `
      + `deepest bus queue ${deepest}; reloads all answered ${answeredMs} ms and the queue drained ${drainMs} ms after the storm; fds ${before.fds} -> ${after.fds}, RSS ${before.rssKb} -> ${after.rssKb} kB`);

    const exitCode = await r.stop();
    expect(exitCode).toBe(0);
  }, 150_000);
});
