// Reads a set of a device's points the way a poll does: de-duplicated and planned into merged
// requests (core/modbus/plan.ts), then decoded per point. Used by command reads and write read-backs.
// Every asked point ends in exactly one of values, failed or absent; scale-factor points read only
// to scale the asked ones are not in the result (their trouble is told through the points they scale).
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
  /** Point id -> why its read failed (the line, the device's answer or the decoding). */
  failed: Record<string, string>;
  /** Point id -> why the device gave it no value: it holds its "not implemented" value, or its scale factor is absent or unusable. */
  absent: Record<string, string>;
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
  const asked = uniquePoints(ids, codecs);
  const all = emptyResult();
  const points = uniquePoints(withScaleFactors(asked.map((point) => point.id), codecs), codecs);
  for (const request of planReads(points, limits, learned)) {
    try {
      decodeInto(all, codecs, request.points, await io.read(request.table, request.start, request.count));
    } catch (err) {
      if (isRefusal(err) && request.points.length > 1) await readOneByOne(io, codecs, request.points, all);
      else for (const point of request.points) all.failed[point.id] = describeError(err);
    }
  }
  for (const { point, reason } of applyScaleFactors(all.values, points.filter((p) => p.scaleFactor !== undefined))) {
    const factorId = point.scaleFactor as string;
    // A factor that failed on the bus fails its points too; one the device lacks leaves them absent.
    if (all.failed[factorId] !== undefined) all.failed[point.id] = `scale factor "${factorId}" failed: ${all.failed[factorId]}`;
    else if (all.absent[factorId] !== undefined) all.absent[point.id] = `scale factor "${factorId}": ${all.absent[factorId]}`;
    else all.absent[point.id] = reason;
  }
  return onlyAsked(all, asked);
}

function emptyResult(): PointReadResult {
  return { values: emptyRecord(), failed: emptyRecord(), absent: emptyRecord() };
}

/** The asked points' outcomes, in the order asked. */
function onlyAsked(all: PointReadResult, asked: readonly PointConfig[]): PointReadResult {
  const result = emptyResult();
  for (const { id } of asked) {
    if (all.values[id] !== undefined) result.values[id] = all.values[id];
    else if (all.failed[id] !== undefined) result.failed[id] = all.failed[id];
    else if (all.absent[id] !== undefined) result.absent[id] = all.absent[id];
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
      else result.absent[point.id] = notImplementedReason(point);
    } catch (err) {
      result.failed[point.id] = describeError(err);
    }
  }
}

/** The device holds the point's "not implemented" value (SunSpec and similar maps). */
export function notImplementedReason(point: PointConfig): string {
  // Short: a read of thousands of such points answers with one of these each.
  return `not implemented (holds ${typeof point.notImplemented === 'string' ? 'an empty string' : String(point.notImplemented)})`;
}
