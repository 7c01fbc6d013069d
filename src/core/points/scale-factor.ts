// Scale factors held in another register (SunSpec `*_SF`, pure): value = decoded x 10^factor.
import type { PointConfig } from '../config/site-types.js';
import type { PointValue } from './types.js';

/** SunSpec allows -10..10; anything else is a broken or foreign register, never a scale. */
export const SCALE_FACTOR_RANGE = { min: -10, max: 10 } as const;

export interface ScaleFactorMiss {
  point: PointConfig;
  message: string;
}

/** The points of `points` that are scaled by another point. */
export function scaledPoints(points: readonly PointConfig[]): PointConfig[] {
  return points.filter((point) => point.scaleFactor !== undefined);
}

/**
 * Applies each point's scale factor to its decoded value in `values`, in place. A point whose
 * factor has no usable value this time is removed (absent, never an unscaled number) and returned.
 * Points whose own value is absent are left alone: the read already said why.
 */
export function applyScaleFactors(values: Record<string, PointValue>, scaled: readonly PointConfig[]): ScaleFactorMiss[] {
  const misses: ScaleFactorMiss[] = [];
  for (const point of scaled) {
    const raw = values[point.id];
    if (raw === undefined) continue;
    const factorId = point.scaleFactor as string;
    const factor = values[factorId];
    delete values[point.id];
    if (typeof raw !== 'number') {
      misses.push({ point, message: `point "${point.id}" is not numeric, cannot apply scale factor "${factorId}"` });
    } else if (factor === undefined) {
      misses.push({ point, message: `point "${point.id}" has no value: its scale factor "${factorId}" was not read or is not implemented` });
    } else if (typeof factor !== 'number' || !Number.isInteger(factor) || factor < SCALE_FACTOR_RANGE.min || factor > SCALE_FACTOR_RANGE.max) {
      misses.push({ point, message: `point "${point.id}" has no value: scale factor "${factorId}" is ${String(factor)}, outside ${SCALE_FACTOR_RANGE.min}..${SCALE_FACTOR_RANGE.max}` });
    } else {
      values[point.id] = withPowerOfTen(raw, factor);
    }
  }
  return misses;
}

/** raw x 10^factor without binary noise (123 x 10^-1 is 12.3, not 12.300000000000001). */
export function withPowerOfTen(raw: number, factor: number): number {
  const exact = factor < 0 ? raw / 10 ** -factor : raw * 10 ** factor;
  return Number(exact.toPrecision(15));
}
