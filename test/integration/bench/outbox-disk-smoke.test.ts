// Keeps the outbox disk bench working: a tiny run checked for correctness only, never for bytes.
import { describe, expect, it } from 'vitest';
import { measureDiskWrites, writeBytes } from '../../bench/outbox-disk.js';

describe('outbox disk bench', () => {
  it('reads this process\'s write counter', () => {
    expect(Number.isInteger(writeBytes())).toBe(true);
  });

  it('measures a healthy link, an outage and its replay', async () => {
    const f = await measureDiskWrites('memory-first', { healthy: 1, outage: 2 });
    expect(f.healthy.reports).toBeGreaterThan(0);
    expect(f.outage.reports).toBeGreaterThan(0);
    expect(f.outage.payloadBytesPerReport).toBeGreaterThan(10);
    expect(f.replay.reports).toBeGreaterThanOrEqual(f.outage.reports);
  }, 120_000);
});
