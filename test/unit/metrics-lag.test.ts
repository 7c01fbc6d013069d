// fieldgate_nodejs_eventloop_lag_*_seconds: NaN before any sample (never Node's 2^63 ns sentinel),
// the delay beyond the sampling period (not period + delay), and a blocked loop always seen.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { systemTimers } from '../../src/core/time.js';
import { LoopDelaySampler, monotonicTime } from '../../src/ops/loop-delay.js';
import { createMetricsRegistry } from '../../src/ops/metrics.js';
import type { GatewayStatus } from '../../src/ops/status.js';

const EMPTY: GatewayStatus = { version: 't', startedAt: '', uptimeS: 0, buses: [], devices: [], links: [], outbox: null, rateQueue: null };

function lag(text: string, stat: string): number {
  const value = new RegExp(`^fieldgate_nodejs_eventloop_lag_${stat}_seconds (\\S+)$`, 'm').exec(text)?.[1];
  if (value === undefined) throw new Error(`no lag ${stat} in the metrics text`);
  return Number(value);
}

function blockLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* a stalled loop: nothing else runs */ }
}

describe('event-loop lag metrics', () => {
  let sampler: LoopDelaySampler | undefined;
  afterEach(() => sampler?.close());

  it('read NaN before any sample and the delay beyond the period after', async () => {
    sampler = new LoopDelaySampler(monotonicTime(systemTimers.setTimer), 200);
    const registry = createMetricsRegistry(() => EMPTY, sampler);
    const first = await registry.metrics();
    for (const stat of ['min', 'max', 'mean', 'p99']) expect(lag(first, stat)).toBeNaN();
    let text = first;
    for (let attempt = 0; attempt < 100 && Number.isNaN(lag(text, 'min')); attempt++) {
      await sleep(50);
      text = await registry.metrics();
    }
    // Late by what the loop was busy with, not the 200 ms period + that (what monitorEventLoopDelay reports).
    expect(lag(text, 'min')).toBeGreaterThanOrEqual(0);
    expect(lag(text, 'min')).toBeLessThan(0.2);
    expect(text).toContain('fieldgate_nodejs_eventloop_lag_seconds');
  });

  it('read NaN without a sampler (a registry built for one scrape)', async () => {
    const text = await createMetricsRegistry(() => EMPTY).metrics();
    for (const stat of ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99']) expect(lag(text, stat)).toBeNaN();
  });

  it('records a stalled loop longer than the sampling period in the maximum, once', async () => {
    sampler = new LoopDelaySampler(monotonicTime(systemTimers.setTimer), 50);
    const registry = createMetricsRegistry(() => EMPTY, sampler);
    await registry.metrics();
    blockLoop(1000);
    // The overdue sample runs as soon as the loop turns again.
    await sleep(60);
    const stalled = await registry.metrics();
    expect(lag(stalled, 'max')).toBeGreaterThanOrEqual(0.9);
    // Each scrape covers the time since the one before: the stall is not reported again.
    let after = await registry.metrics();
    for (let attempt = 0; attempt < 100 && Number.isNaN(lag(after, 'max')); attempt++) {
      await sleep(60);
      after = await registry.metrics();
    }
    expect(lag(after, 'max')).toBeLessThan(0.9);
  });
});
