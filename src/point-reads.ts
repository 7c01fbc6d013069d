// Reads a set of a device's points the way a poll does: de-duplicated and planned into merged
// requests (modbus/plan.ts), then decoded per point. Used by command reads and write read-backs.
import type { DeviceLimits, PointConfig } from './config/site-types.js';
import type { DeviceIo } from './device-write-types.js';
import { describeError, emptyRecord } from './device-write-types.js';
import { planReads } from './modbus/plan.js';
import type { PointCodec } from './points/codec.js';
import type { PointValue } from './points/types.js';

export interface PointReadResult {
  values: Record<string, PointValue>;
  /** Point id -> why its read failed (every point of a failed request). */
  failed: Record<string, string>;
}

/** The known points among `ids`, each once, in first-seen order (pure). */
export function uniquePoints(ids: Iterable<string>, codecs: ReadonlyMap<string, PointCodec>): PointConfig[] {
  const seen = new Set<string>();
  const points: PointConfig[] = [];
  for (const id of ids) {
    const codec = codecs.get(id);
    if (!codec || seen.has(id)) continue;
    seen.add(id);
    points.push(codec.point);
  }
  return points;
}

export async function readPoints(
  io: DeviceIo, codecs: ReadonlyMap<string, PointCodec>, ids: Iterable<string>, limits: DeviceLimits,
): Promise<PointReadResult> {
  const result: PointReadResult = { values: emptyRecord(), failed: emptyRecord() };
  const points = uniquePoints(ids, codecs);
  if (points.length === 0) return result;
  for (const request of planReads(points, limits)) {
    try {
      const block = await io.read(request.table, request.start, request.count);
      for (const point of request.points) result.values[point.id] = (codecs.get(point.id) as PointCodec).decode(block);
    } catch (err) {
      const reason = describeError(err);
      for (const point of request.points) result.failed[point.id] = reason;
    }
  }
  return result;
}
