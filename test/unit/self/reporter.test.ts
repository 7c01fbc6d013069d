// The own-attribute reporter with a fake channel and a manual clock.
import { describe, expect, it } from 'vitest';
import type { SelfChannel, SelfCommandHandler } from '../../../src/core/self-channel.js';
import type { GatewayStatus } from '../../../src/ops/status.js';
import { SelfReporter } from '../../../src/ops/self/reporter.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { ManualClock, eventLoopTurns } from '../../helpers/manual-clock.js';
import { bus, gatewayStatus } from './status-fixture.js';

class FakeChannel implements SelfChannel {
  readonly reports: Array<Record<string, unknown>> = [];
  down = false;
  private upListeners: Array<() => void> = [];
  reportAttributes(attributes: Readonly<Record<string, unknown>>): Promise<void> {
    if (this.down) return Promise.reject(new Error('cannot publish: link is down'));
    this.reports.push({ ...attributes });
    return Promise.resolve();
  }
  onCommand(_handler: SelfCommandHandler): void {}
  onUp(listener: () => void): void {
    this.upListeners.push(listener);
  }
  up(): void {
    for (const listener of this.upListeners) listener();
  }
}

function setup() {
  const clock = new ManualClock();
  const channel = new FakeChannel();
  const captured = captureLogger();
  let status: GatewayStatus = gatewayStatus();
  const reporter = new SelfReporter({
    channel, sample: () => ({ status, rssBytes: 1 << 20, at: clock.now() }),
    settings: { reportIntervalMs: 60_000, minReportGapMs: 5000 }, time: clock, log: captured.logger,
  });
  const step = async (ms: number) => {
    clock.advance(ms);
    await eventLoopTurns();
  };
  return { clock, channel, captured, reporter, step, set: (s: GatewayStatus) => { status = s; } };
}

describe('own attribute reports', () => {
  it('reports at start, then once per interval while nothing discrete changes', async () => {
    const { reporter, channel, step, set } = setup();
    reporter.start();
    await step(1000);
    expect(channel.reports).toHaveLength(1);
    // Counters and uptime move all the time: not a reason to report.
    set(gatewayStatus({ uptimeS: 500, buses: [bus('line1', 9000, 4)] }));
    await step(58_000);
    expect(channel.reports).toHaveLength(1);
    await step(2000);
    expect(channel.reports).toHaveLength(2);
    expect(channel.reports[1]).toMatchObject({ uptime_s: 500, buses: { line1: { good_per_min: expect.any(Number) } } });
  });

  it('reports a discrete change within the gap, and coalesces a burst of changes into one report per gap', async () => {
    const { reporter, channel, step, set } = setup();
    reporter.start();
    await step(1000);
    set(gatewayStatus({}, [true, true]));
    await step(1000);
    // 1 s after the first report: the gap holds it back.
    expect(channel.reports).toHaveLength(1);
    // Devices flap every second for 10 s.
    for (let i = 0; i < 10; i += 1) {
      set(gatewayStatus({}, i % 2 === 0 ? [false, false] : [true, true]));
      await step(1000);
    }
    const times = channel.reports.length;
    expect(times).toBeGreaterThanOrEqual(2);
    expect(times).toBeLessThanOrEqual(1 + Math.ceil(11_000 / 5000));
    set(gatewayStatus({ buses: [bus('line1', 100, 4, false)] }));
    await step(5000);
    expect(channel.reports.at(-1)).toMatchObject({ buses_up: 0, buses: { line1: { up: false } } });
  });

  it('link down: not reported, logged once; after the reconnect reported within the gap and logged once', async () => {
    const { reporter, channel, step, captured } = setup();
    channel.down = true;
    reporter.start();
    for (let i = 0; i < 12; i += 1) await step(5000);
    expect(channel.reports).toHaveLength(0);
    expect(captured.count('own attributes not reported')).toBe(1);
    channel.down = false;
    channel.up();
    await step(5000);
    expect(channel.reports).toHaveLength(1);
    expect(captured.count('own attributes reported again')).toBe(1);
    expect(reporter.counters.failures).toBeGreaterThanOrEqual(2);
  });

  it('a reconnect right after a report waits for the gap, then reports', async () => {
    const { reporter, channel, step } = setup();
    reporter.start();
    await step(1000);
    channel.up();
    await eventLoopTurns();
    expect(channel.reports).toHaveLength(1);
    await step(5000);
    expect(channel.reports).toHaveLength(2);
  });

  it('a status that throws is logged and does not stop the reports', async () => {
    const clock = new ManualClock();
    const channel = new FakeChannel();
    const captured = captureLogger();
    let fail = true;
    const reporter = new SelfReporter({
      channel, sample: () => { if (fail) throw new Error('boom'); return { status: gatewayStatus(), rssBytes: 0, at: clock.now() }; },
      settings: { reportIntervalMs: 60_000, minReportGapMs: 5000 }, time: clock, log: captured.logger,
    });
    reporter.start();
    clock.advance(1000);
    fail = false;
    clock.advance(1000);
    await eventLoopTurns();
    expect(captured.count('own status unavailable')).toBe(1);
    expect(channel.reports).toHaveLength(1);
    reporter.stop();
    expect(clock.sleeping).toBe(0);
  });
});
