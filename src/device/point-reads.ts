// Reads a set of a device's points the way a poll does: de-duplicated and planned into merged
// requests (core/modbus/plan.ts), then decoded per point. Used by command reads and write read-backs.
import type { DeviceLimits, PointConfig } from '../core/config/site-types.js';
import type { DeviceIo } from '../core/device-write-types.js';
import { describeError, emptyRecord } from '../core/device-write-types.js';
import { isRefusal } from '../field/modbus/errors.js';
import { planReads, pointWidth, type LearnedReadLimits } from '../core/modbus/plan.js';
import type { PointCodec, ReadBlock } from '../core/points/codec.js';
import type { PointValue } from '../core/points/types.js';
import { applyScaleFactors, withScaleFactors } from './scaled-points.js';

export interface PointReadResult {
  values: Record<string, PointValue>;
  /** Point id -> why its read failed. */
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

/**
 * Reads `ids` with the same learned limits as the device's polls (cuts, isolated points, shorter
 * lengths), so a command never merges what the device refuses. A merged request refused anyway
 * (exception 2/3: the poller has not learned it yet) is read point by point; a point that does not
 * decode fails alone.
 */
export async function readPoints(
  io: DeviceIo, codecs: ReadonlyMap<string, PointCodec>, ids: Iterable<string>, limits: DeviceLimits, learned: LearnedReadLimits = {},
): Promise<PointReadResult> {
  const result: PointReadResult = { values: emptyRecord(), failed: emptyRecord() };
  const points = uniquePoints(withScaleFactors(ids, codecs), codecs);
  if (points.length === 0) return result;
  for (const request of planReads(points, limits, learned)) {
    try {
      decodeInto(result, codecs, request.points, await io.read(request.table, request.start, request.count));
    } catch (err) {
      if (isRefusal(err) && request.points.length > 1) await readOneByOne(io, codecs, request.points, result);
      else for (const point of request.points) result.failed[point.id] = describeError(err);
    }
  }
  for (const { point, message } of applyScaleFactors(result.values, points.filter((p) => p.scaleFactor !== undefined))) {
    result.failed[point.id] = message;
  }
  return result;
}

async function readOneByOne(io: DeviceIo, codecs: ReadonlyMap<string, PointCodec>, points: readonly PointConfig[], result: PointReadResult): Promise<void> {
  for (const point of points) {
    try {
      decodeInto(result, codecs, [point], await io.read(point.table, point.address, pointWidth(point)));
    } catch (err) {
      result.failed[point.id] = describeError(err);
    }
  }
}

function decodeInto(result: PointReadResult, codecs: ReadonlyMap<string, PointCodec>, points: readonly PointConfig[], block: ReadBlock): void {
  for (const point of points) {
    try {
      const value = (codecs.get(point.id) as PointCodec).decode(block);
      if (value !== undefined) result.values[point.id] = value;
    } catch (err) {
      result.failed[point.id] = describeError(err);
    }
  }
}
