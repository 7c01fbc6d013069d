// Keeps the northbound bench working: tiny runs checked for correctness only, never speed.
import { describe, expect, it } from 'vitest';
import { measureNorthboundOnly, measurePushLatency } from '../../bench/northbound.js';

describe('northbound bench', () => {
  it('moves reports from the reporter to PUBACK and has a raw baseline', async () => {
    const r = await measureNorthboundOnly(1, 10);
    expect(r.pointsPerS).toBeGreaterThan(0);
    expect(r.rawPointsPerS).toBeGreaterThan(0);
  }, 60_000);

  it('measures push -> register latency for every push', async () => {
    const r = await measurePushLatency(5);
    expect(r.p50).toBeGreaterThan(0);
    expect(r.max).toBeGreaterThanOrEqual(r.p99);
  }, 60_000);
});
