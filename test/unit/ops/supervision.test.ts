// The gateway's operating policy on fake time: watchdog pinged only while nothing is stalled,
// outbox-full warned once above 80 % and cleared only under 70 %, 429 transitions logged once,
// and the drain waits only while a link is up and reports remain.
import { describe, expect, it } from 'vitest';
import type { ReportOutbox } from '../../../src/core/outbox-types.js';
import type { GatewayOutbox } from '../../../src/ops/gateway-outbox.js';
import { busStatusOf, statusSummary } from '../../../src/ops/status-assembly.js';
import type { GatewayStatus } from '../../../src/ops/status.js';
import { drainOutbox, startSupervisionTicker } from '../../../src/ops/supervision.js';
import type { Notifier } from '../../../src/ops/systemd.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { ManualClock } from '../../helpers/manual-clock.js';

function fakeNotifier() {
  const calls = { watchdog: 0, status: [] as string[] };
  const notifier: Notifier = {
    enabled: true, ready: () => undefined, stopping: () => undefined, reloading: () => undefined, close: () => undefined,
    watchdog: () => { calls.watchdog += 1; }, status: (text) => { calls.status.push(text); },
  };
  return { notifier, calls };
}

function fakeStore(depth: { value: number }) {
  let fill = 0;
  const outbox = { stats: () => ({ depth: depth.value, bytes: depth.value * 10, devices: {} }), flush: () => undefined } as unknown as ReportOutbox;
  const ticks: number[] = [];
  const store = {
    outbox, status: () => ({ depth: 0, bytes: 0, maxBytes: 0, dropped: 0 }), fill: () => fill,
    tick: (_now: number, acked: number) => { ticks.push(acked); }, resetFullWarning: () => undefined, discard: () => 0, onFileTakenUp: () => undefined,
  } as GatewayOutbox;
  return { store, ticks, setFill: (f: number) => { fill = f; } };
}

describe('supervision ticker', () => {
  it('pings the watchdog only while no loop is stalled, and logs each transition once', () => {
    const clock = new ManualClock();
    const log = captureLogger();
    const { notifier, calls } = fakeNotifier();
    const { store, ticks, setFill } = fakeStore({ value: 0 });
    let stalled: string[] = [];
    let limited = 0;
    const stop = startSupervisionTicker({
      notifier, store, maxOutboxBytes: 1000, stalled: () => stalled, summary: () => 'sum', logger: log.logger, time: clock,
      links: () => [{ device: 'a', state: 'up', reconnects: 0, publishes: 7 }], rateLimited: () => limited, intervalMs: 1000,
    });
    const steps: Array<[fill: number, stalledLoops: string[], total429: number]> = [
      [0.5, [], 0], [0.85, [], 0], [0.9, ['poller plc'], 1], [0.75, [], 1], [0.65, [], 3], [0.65, [], 3],
    ];
    for (const [fill, loops, total] of steps) {
      setFill(fill);
      stalled = loops;
      limited = total;
      clock.advance(1000);
    }
    stop();
    clock.advance(5000);
    expect(calls.watchdog).toBe(5); // not while 'poller plc' was stalled, nothing after stop
    expect(calls.status).toEqual(Array(6).fill('sum'));
    expect(ticks).toEqual(Array(6).fill(7));
    expect(log.count('outbox over 80 % full')).toBe(1);
    expect(log.count('outbox back under 70 %')).toBe(1); // 0.75 is still "over" (hysteresis)
    expect(log.count('cloud rate limited (429)')).toBe(2); // 0 -> 1, then 1 -> 3 after a quiet tick
    expect(log.count('cloud rate limit cleared')).toBe(2);
  });
});

describe('drainOutbox', () => {
  it.each([
    { name: 'returns at once when empty', depth: 0, up: true, waitedAtLeast: 0, waitedAtMost: 0 },
    { name: 'returns at once when no link is up', depth: 5, up: false, waitedAtLeast: 0, waitedAtMost: 0 },
    { name: 'gives up after drainMs with reports left', depth: 5, up: true, waitedAtLeast: 3000, waitedAtMost: 3050 },
  ])('$name', async ({ depth, up, waitedAtLeast, waitedAtMost }) => {
    const clock = new ManualClock();
    const start = clock.now();
    const outbox = { stats: () => ({ depth }) } as unknown as ReportOutbox;
    const done = drainOutbox(outbox, () => up, 3000, clock);
    for (let i = 0; i < 100; i += 1) {
      await Promise.resolve();
      clock.advance(50);
    }
    await done;
    const waited = clock.delays.reduce((sum, d) => sum + d, 0);
    expect(waited).toBeGreaterThanOrEqual(waitedAtLeast);
    expect(waited).toBeLessThanOrEqual(waitedAtMost);
    expect(clock.now()).toBeGreaterThan(start);
  });
});

describe('status assembly', () => {
  it.each([
    { busy: 500, uptime: 1000, utilisation: 0.5 },
    { busy: 5000, uptime: 1000, utilisation: 1 },
    { busy: 10, uptime: 0, utilisation: 0 },
  ])('bus utilisation $busy ms busy over $uptime ms is $utilisation', ({ busy, uptime, utilisation }) => {
    const stats = { bus: 'plc', state: 'up', queueDepth: 0, transactions: 3, timeouts: 1, exceptions: 0, busyTimeMs: busy, discardedReplies: 2, silenceReopens: 0, lateReplies: 0, lateUnits: [] as unknown[] };
    expect(busStatusOf(stats as Parameters<typeof busStatusOf>[0], 'rtu', uptime)).toEqual(expect.objectContaining({ name: 'plc', up: true, utilisation, discardedReplies: 2 }));
  });

  it('summarises devices, links and outbox in one line', () => {
    const status = {
      devices: [{ online: true }, { online: false }], links: [{ state: 'up' }, { state: 'down' }, { state: 'up' }], outbox: { depth: 12 },
    } as unknown as GatewayStatus;
    expect(statusSummary(status)).toBe('1/2 devices online, 2/3 links up, outbox 12');
  });
});
