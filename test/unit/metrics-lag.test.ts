// fieldgate_nodejs_eventloop_lag_min_seconds: never Node's "no sample" sentinel (2^63 ns).
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../../src/ops/metrics.js';
import type { GatewayStatus } from '../../src/ops/status.js';

const EMPTY: GatewayStatus = { version: 't', startedAt: '', uptimeS: 0, buses: [], devices: [], links: [], outbox: null, rateQueue: null };

function lagMin(text: string): string | undefined {
  return /^fieldgate_nodejs_eventloop_lag_min_seconds (\S+)$/m.exec(text)?.[1];
}

describe('event-loop lag minimum', () => {
  it('reads NaN before any sample and a small number after', async () => {
    const registry = createMetricsRegistry(() => EMPTY);
    const first = lagMin(await registry.metrics());
    expect(first).toBeDefined();
    expect(Number(first)).not.toBeGreaterThan(1e6);
    // The histogram samples every 10 ms: wait until it has some.
    let later: string | undefined;
    for (let attempt = 0; attempt < 50 && (later === undefined || Number.isNaN(Number(later))); attempt++) {
      await sleep(50);
      later = lagMin(await registry.metrics());
    }
    expect(Number(later)).toBeGreaterThanOrEqual(0);
    expect(Number(later)).toBeLessThan(60);
  });
});
