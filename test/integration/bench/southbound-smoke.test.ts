// Keeps the southbound bench working: a very short run checked for correctness only, never speed.
import { describe, expect, it } from 'vitest';
import { benchDevice, measureSouthbound } from '../../bench/southbound.js';
import { planReads } from '../../../src/core/modbus/plan.js';

describe('southbound bench', () => {
  it('plans the bench device into few requests covering all 50 points', () => {
    const device = benchDevice(1);
    const plan = planReads(device.points, device.limits);
    expect(device.points).toHaveLength(50);
    expect(plan.reduce((n, r) => n + r.points.length, 0)).toBe(50);
    expect(plan.length).toBeLessThan(10);
  });

  it('measures both pollers on the baud-accurate line without errors', async () => {
    const r = await measureSouthbound({ baud: 115200, parity: 'even' }, 600, 2);
    for (const p of [r.fieldgate, r.naive]) {
      expect(p.errors).toBe(0);
      expect(p.requests).toBeGreaterThan(0);
      expect(p.usefulRegisters).toBeGreaterThan(0);
      expect(p.wireRegisters).toBeGreaterThanOrEqual(p.usefulRegisters);
    }
    expect(r.limit125).toBeGreaterThan(r.planLimit);
    expect(r.formula).toContain('115200 8E1');
  }, 60_000);
});
