// The daemon under libfaketime, its wall clock stepped as NTP steps a Pi's (the monotonic clock
// untouched): -1 h, +1 day and +10 years while polling, back and forth every second for a minute,
// then -2 h during a broker outage. Polling
// goes on after each step, the reports stamp the wall clock as it is, the outage's backlog reaches
// the broker, each step is logged once with its size, and SIGTERM ends the process.
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WallClockControl } from '../helpers/faketime.js';
import { freePort } from '../helpers/mosquitto.js';
import { mbpollHolding } from '../helpers/share-clients.js';
import { DeliveryRig, outOfOrder, settle } from './delivery-rig.js';

const POLL_MS = 50;
const REPORTS_AFTER_STEP = 60;

interface LogLine { msg?: string; stepMs?: number }

function logLines(path: string): LogLine[] {
  return readFileSync(path, 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as LogLine);
}

describe('wall clock steps (libfaketime, monotonic clock untouched)', () => {
  let rig: DeliveryRig | undefined;
  let wall: WallClockControl | undefined;
  afterEach(async () => {
    await rig?.close();
    wall?.dispose();
    rig = undefined;
    wall = undefined;
  });

  it('keeps polling through -1 h, +1 day, +10 years and a minute of steps back and forth, replays an outage stepped -2 h, and stops on SIGTERM', async () => {
    wall = new WallClockControl();
    const clock = wall;
    const sharePort = await freePort();
    rig = await DeliveryRig.start({ mode: 'memory-first', durableAfterMs: 1000, logLevel: 'info', share: { port: sharePort, cacheMs: 2000 } });
    const r = rig;
    const logPath = join(r.dir, 'gateway.log');
    const log = openSync(logPath, 'w');
    const gateway = r.startGateway({ out: log, err: log }, clock.env());
    await settle(() => r.received.length >= 20, 30_000);
    const rates: string[] = [];

    const stepAndKeepPolling = async (offset: string, expectedMs: number): Promise<void> => {
      const before = r.received.length;
      const steps = logLines(logPath).filter((l) => l.msg === 'wall clock stepped').length;
      const started = performance.now();
      clock.step(offset);
      await settle(() => r.received.length >= before + REPORTS_AFTER_STEP, 60_000);
      expect(r.received.length - before, `reports within 60 s after ${offset}`).toBeGreaterThanOrEqual(REPORTS_AFTER_STEP);
      const perS = ((r.received.length - before) * 1000) / (performance.now() - started);
      rates.push(`${offset}: ${perS.toFixed(1)} reports/s (polling every ${POLL_MS} ms: ${1000 / POLL_MS}/s)`);
      // The newest reports carry the stepped wall clock (within the cache second and the queue).
      const ts = r.receivedTs[r.receivedTs.length - 1] ?? 0;
      expect(Math.abs(ts - (Date.now() + expectedMs)), `report ts after ${offset}`).toBeLessThan(60_000);
      await settle(() => logLines(logPath).filter((l) => l.msg === 'wall clock stepped').length > steps, 30_000);
      const line = logLines(logPath).filter((l) => l.msg === 'wall clock stepped')[steps]!;
      expect(Math.abs((line.stepMs ?? 0) - (expectedMs - previousOffset)), `logged step of ${offset}`).toBeLessThan(5_000);
      previousOffset = expectedMs;
    };
    let previousOffset = 0;
    await stepAndKeepPolling('-1h', -3_600_000);
    // The share's cache ages blocks on the monotonic clock: after the step back, a block read
    // before it is not the youngest, and the counter (100 counts/s) read through the share moves on.
    const counterViaShare = async (): Promise<number> => {
      const { values, output } = await mbpollHolding(sharePort, 1, 5, 2);
      expect(values, output).toHaveLength(2);
      return ((values[0]! & 0xffff) * 65536) + (values[1]! & 0xffff);
    };
    const first = await counterViaShare();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const second = await counterViaShare();
    rates.push(`share after the step back: ${first} then ${second} 3 s later`);
    expect(second - first, 'the share answers the device\'s new values').toBeGreaterThanOrEqual(150);
    await stepAndKeepPolling('+1d', 86_400_000);
    // libfaketime's year is 365 days.
    await stepAndKeepPolling('+10y', 3650 * 86_400_000);

    // Hostile: the wall clock stepping back and forth every second for 20 s (a flapping time
    // source: 20 steps). Polling goes on: at least half its rate's worth of reports arrives while it flaps.
    const FLAP_MS = 20_000;
    let back = false;
    const flap = setInterval(() => {
      back = !back;
      clock.step(back ? '-1h' : '+10y');
    }, 1000);
    const flapStart = performance.now();
    const beforeFlap = r.received.length;
    const halfRate = FLAP_MS / POLL_MS / 2;
    await settle(() => performance.now() - flapStart >= FLAP_MS && r.received.length - beforeFlap >= halfRate, 180_000);
    clearInterval(flap);
    rates.push(`flapping for ${Math.round((performance.now() - flapStart) / 1000)} s: ${r.received.length - beforeFlap} reports`);
    expect(r.received.length - beforeFlap, 'reports while the clock flapped').toBeGreaterThanOrEqual(halfRate);

    // An outage, stepped back 2 h in the middle of it: reports reach the disk, then the broker.
    await r.broker.stop();
    const seenBefore = r.outbox.seen.length;
    clock.step('-2h');
    await settle(() => r.outbox.seen.length >= seenBefore + REPORTS_AFTER_STEP, 60_000);
    expect(r.outbox.seen.length - seenBefore, 'reports on disk during the outage').toBeGreaterThanOrEqual(REPORTS_AFTER_STEP);
    const onDisk = [...r.outbox.seen];
    await r.broker.restart();
    await settle(() => r.missing(onDisk).length === 0, 90_000);

    const stopping = performance.now();
    gateway.child.kill('SIGTERM');
    const code = await gateway.exited;
    const stopMs = Math.round(performance.now() - stopping);
    closeSync(log);
    console.log(`wall clock steps: ${rates.join('; ')}; outage backlog of ${onDisk.length - seenBefore}+ reports replayed; SIGTERM to exit ${stopMs} ms`);
    expect(code).toBe(0);
    expect(r.missing(onDisk)).toEqual([]);
    expect(outOfOrder(r.received)).toEqual([]);
  }, 420_000);
});
