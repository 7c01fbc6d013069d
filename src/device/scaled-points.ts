// Which of a device's points take their scale from another point (SunSpec `*_SF`), found once per device.
import type { PointConfig } from '../core/config/site-types.js';
import type { PointCodec } from '../core/points/codec.js';
import { scaledPoints } from '../core/points/scale-factor.js';

export { applyScaleFactors } from '../core/points/scale-factor.js';

// Keyed by the device's frozen codec map: computed on the first poll, not on every cycle.
const byDevice = new WeakMap<ReadonlyMap<string, PointCodec>, readonly PointConfig[]>();

export function scaledPointsOf(codecs: ReadonlyMap<string, PointCodec>): readonly PointConfig[] {
  let scaled = byDevice.get(codecs);
  if (!scaled) {
    scaled = scaledPoints([...codecs.values()].map((codec) => codec.point));
    byDevice.set(codecs, scaled);
  }
  return scaled;
}

/** `ids` followed by the scale-factor points they need, so a read of `W` also reads `W_SF`. */
export function withScaleFactors(ids: Iterable<string>, codecs: ReadonlyMap<string, PointCodec>): string[] {
  const list = [...ids];
  for (const id of [...list]) {
    const factor = codecs.get(id)?.point.scaleFactor;
    if (factor !== undefined) list.push(factor);
  }
  return list;
}
