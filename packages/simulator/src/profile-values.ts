// Plausible values for a profile's points (pure): picked by unit and type, distinct per point so a
// swapped address shows, and returned with what a correct master must decode from them.
import type { DeviceProfile } from 'fieldgate/workspace-kit';

/** A profile point as the profile file spells it (defaults filled from the profile's device keys). */
export interface ProfilePoint {
  id: string;
  table: 'coil' | 'discrete' | 'holding' | 'input';
  address: number;
  type: string;
  length: number;
  wordOrder: 'big' | 'little';
  byteOrder: 'big' | 'little';
  scale: number;
  unit?: string;
  scaleFactor?: string;
  notImplemented?: number;
}

/** Engineering values by unit: typical readings of a meter or inverter in operation. */
const TYPICAL: Record<string, number> = {
  V: 230.5, A: 5.25, W: 1234.5, kW: 1.25, var: 120.5, kvar: 0.5, VA: 1300.5, kVA: 1.5, Hz: 50.25,
  kWh: 12345.5, Wh: 1234567, varh: 23456, kvarh: 2345.5, VAh: 34567, '%': 2.5, degC: 35.5, deg: 12.5, s: 3600,
};

export function profilePoints(profile: DeviceProfile, base: number, prefix = ''): ProfilePoint[] {
  const device = profile.device as { wordOrder?: 'big' | 'little'; byteOrder?: 'big' | 'little' };
  return profile.points.map((raw) => {
    const p = raw as Record<string, unknown>;
    return {
      id: `${prefix}${p.id as string}`,
      table: p.table as ProfilePoint['table'],
      address: (p.address as number) + base,
      type: (p.type as string | undefined) ?? (p.table === 'coil' || p.table === 'discrete' ? 'bool' : 'uint16'),
      length: (p.length as number | undefined) ?? 1,
      wordOrder: (p.wordOrder as 'big' | 'little' | undefined) ?? device.wordOrder ?? 'big',
      byteOrder: (p.byteOrder as 'big' | 'little' | undefined) ?? device.byteOrder ?? 'big',
      scale: (p.scale as number | undefined) ?? 1,
      ...(typeof p.unit === 'string' ? { unit: p.unit } : {}),
      ...(typeof p.scaleFactor === 'string' ? { scaleFactor: `${prefix}${p.scaleFactor}` } : {}),
      ...(typeof p.notImplemented === 'number' ? { notImplemented: p.notImplemented } : {}),
    };
  });
}

/** What the simulator holds for one point: the raw value it encodes and what it means. */
export interface HeldValue {
  point: ProfilePoint;
  /** Raw number (before scale and scale factor), string or boolean. */
  raw: number | string | boolean;
  /** The engineering value a correct master decodes; undefined = the "not implemented" marker. */
  expected: number | string | boolean | undefined;
}

const INTEGER = new Set(['int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64']);
const INTEGER_MAX: Record<string, number> = { int16: 0x7fff, uint16: 0xffff, int32: 0x7fffffff, uint32: 0xffffffff, int64: Number.MAX_SAFE_INTEGER, uint64: Number.MAX_SAFE_INTEGER };

/** SunSpec scale factors: -1 (one decimal) for measurements, 0 for energy counters. */
function scaleFactorValue(id: string): number {
  return /Wh|VAh|VArh|varh/i.test(id) ? 0 : -1;
}

function pow10(raw: number, exponent: number): number {
  return Number((exponent < 0 ? raw / 10 ** -exponent : raw * 10 ** exponent).toPrecision(15));
}

/**
 * Values for every point. The last point that has a "not implemented" value holds it, so every
 * profile with such points also rehearses the absent case.
 */
export function plausibleValues(points: readonly ProfilePoint[]): HeldValue[] {
  const factors = new Map<string, number>();
  for (const point of points) if (point.scaleFactor) factors.set(point.scaleFactor, scaleFactorValue(point.scaleFactor));
  const lastSentinel = points.map((p) => p.notImplemented !== undefined && !factors.has(p.id)).lastIndexOf(true);
  return points.map((point, index) => {
    if (index === lastSentinel) return { point, raw: point.notImplemented as number, expected: undefined };
    if (point.type === 'bool') return { point, raw: index % 2 === 0, expected: index % 2 === 0 };
    if (point.type === 'string') {
      const text = `sim-${point.id}`.slice(0, point.length * 2);
      return { point, raw: text, expected: text };
    }
    if (factors.has(point.id)) {
      const factor = factors.get(point.id) as number;
      return { point, raw: factor, expected: factor };
    }
    const typical = point.unit !== undefined ? TYPICAL[point.unit] : undefined;
    const factor = point.scaleFactor !== undefined ? factors.get(point.scaleFactor) as number : 0;
    if (INTEGER.has(point.type)) {
      // Counts, states and bit fields without a unit: small distinct integers, never the sentinel 0.
      let engineering = typical ?? (point.unit === '' ? 0.95 : 1);
      // A negative scale (a register the profile reads negated, or a divisor the document gives as
      // negative) holds the reading's magnitude: an unsigned register cannot hold less than 0.
      const rawOf = (reading: number) => Math.round(reading / Math.abs(point.scale) / 10 ** factor) + index + 1;
      // A typical reading too large for a 16-bit register at this scale (a daily kWh counter in
      // 0.1 kWh) is taken a decade lower: the value must be one the device could hold.
      while (rawOf(engineering) > INTEGER_MAX[point.type] && Math.abs(engineering) >= 1) engineering /= 10;
      const raw = rawOf(engineering);
      const scaled = pow10(raw, factor);
      return { point, raw, expected: point.scale === 1 ? scaled : Number((scaled * point.scale).toPrecision(15)) };
    }
    // Floats: quarter steps (whole steps from 1000 up) are exact in float32 and print as held.
    const start = typical ?? (point.unit === '' ? 0.75 : 1);
    const raw = start + index * (Math.abs(start) >= 1000 ? 1 : 0.25);
    return { point, raw, expected: Number((raw * point.scale).toPrecision(15)) };
  });
}
