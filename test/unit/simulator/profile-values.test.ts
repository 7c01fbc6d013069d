// The simulator's plausible values for profile points fit the point's register: a typical reading
// too large for a 16-bit counter at its scale is taken a decade lower, never encoded out of range.
import { describe, expect, it } from 'vitest';
import { plausibleValues, type ProfilePoint } from '../../../packages/simulator/src/profile-values.js';

const point = (id: string, type: string, scale: number, unit: string): ProfilePoint =>
  ({ id, table: 'input', address: 0, type, length: 1, wordOrder: 'big', byteOrder: 'big', scale, unit });

describe('plausible profile values', () => {
  it('fits a daily kWh counter held as uint16 in 0.1 kWh into the register, and decodes to raw × scale', () => {
    const [held] = plausibleValues([point('energy_today', 'uint16', 0.1, 'kWh')]);
    expect(held.raw as number).toBeLessThanOrEqual(0xffff);
    expect(held.raw as number).toBeGreaterThan(0);
    expect(held.expected).toBeCloseTo((held.raw as number) * 0.1, 9);
  });

  it('keeps the typical reading where it fits (uint32 in 0.1 kWh)', () => {
    const [held] = plausibleValues([point('energy_total', 'uint32', 0.1, 'kWh')]);
    expect(held.raw).toBe(123456);
    expect(held.expected).toBeCloseTo(12345.6, 9);
  });

  it('fits a signed 16-bit register too (int16 Wh at scale 1, whose typical reading is 1234567)', () => {
    const [held] = plausibleValues([point('energy', 'int16', 1, 'Wh')]);
    expect(held.raw as number).toBeLessThanOrEqual(0x7fff);
    expect(held.raw as number).toBeGreaterThan(0);
    expect(held.expected).toBe(held.raw);
  });
});
