// Attribute pushes and synced values: check every key against the point map, write the valid
// ones in the order given, then read back (one planned read) every written point and every
// refused or failed point the device has, so the cloud converges on what the device really holds.
import type { DeviceConfig } from '../core/config/site-types.js';
import { type ApplyResult, type DeviceIo, describeError, emptyRecord, firstNames, NAMES_SHOWN } from '../core/device-write-types.js';
import type { Logger } from '../core/logger.js';
import type { LearnedReadLimits } from '../core/modbus/plan.js';
import { readPoints } from './point-reads.js';
import type { PointCodec, WriteOp } from '../core/points/codec.js';
import type { WriteOutcome } from './write-sequencer.js';

export type CheckResult = { ok: true; codec: PointCodec; write: WriteOp } | { ok: false; reason: string };

export interface AttributeWriterParts {
  device: DeviceConfig;
  codecs: ReadonlyMap<string, PointCodec>;
  io: DeviceIo;
  logger: Logger;
  /** The poller's learned limits for this device, so the read-back plans like a poll. */
  learned(): LearnedReadLimits;
  check(id: string, value: unknown): CheckResult;
  /** One point's write through the device's write path (write-sequencer.ts); `io.write` when absent. */
  write?(id: string, op: WriteOp): Promise<WriteOutcome>;
}

export async function applyAttributes(parts: AttributeWriterParts, values: Record<string, unknown>, source: string): Promise<ApplyResult> {
  const { io, codecs } = parts;
  const result: ApplyResult = { applied: emptyRecord(), rejected: emptyRecord(), failed: emptyRecord(), corrected: emptyRecord() };
  const written: string[] = [];
  for (const id of Object.keys(values)) {
    const checked = parts.check(id, values[id]);
    if (!checked.ok) {
      result.rejected[id] = checked.reason;
      continue;
    }
    try {
      // A write dropped for a later one of its point is not read back: the later write's read-back
      // tells the cloud what the device holds (and a backlog of dropped writes costs no bus time).
      const outcome = await (parts.write ? parts.write(id, checked.write) : io.write(checked.write).then(() => 'written' as const));
      if (outcome === 'written') written.push(id);
    } catch (err) {
      result.failed[id] = describeError(err);
    }
  }
  const notTaken = [...Object.keys(result.rejected), ...Object.keys(result.failed)].filter((id) => codecs.has(id));
  const readBack = await readPoints(io, codecs, [...written, ...notTaken], parts.device.limits, parts.learned());
  // Result maps have no prototype: a missing id reads as undefined, whatever its name.
  for (const id of written) {
    const value = readBack.values[id];
    if (value !== undefined) result.applied[id] = value;
    else result.failed[id] = `written, but read-back failed: ${readBack.failed[id] ?? readBack.absent[id] ?? 'no value'}`;
  }
  for (const id of notTaken) {
    const value = readBack.values[id];
    if (value !== undefined) result.corrected[id] = value;
  }
  logRefusals(parts, result, source);
  return result;
}

/** One line per message, however many keys it had: counts, the first few names and reasons. */
function logRefusals(parts: AttributeWriterParts, result: ApplyResult, source: string): void {
  const rejected = Object.keys(result.rejected);
  const failed = Object.keys(result.failed);
  if (rejected.length === 0 && failed.length === 0) return;
  // Only the first few are formatted: a message may carry thousands of keys.
  const shown = [...rejected.slice(0, NAMES_SHOWN), ...failed.slice(0, NAMES_SHOWN)].slice(0, NAMES_SHOWN);
  const reasons = shown.map((id) => (Object.hasOwn(result.rejected, id) ? result.rejected[id] : `${id}: ${result.failed[id]}`));
  const corrected = Object.keys(result.corrected);
  parts.logger.warn({
    device: parts.device.name, source, refused: rejected.length, failed: failed.length,
    keys: firstNames(rejected.length >= NAMES_SHOWN ? rejected : [...rejected, ...failed], NAMES_SHOWN, rejected.length + failed.length),
    reasons,
    // The cloud stored the pushed value as current: the device's real one is reported instead.
    corrected: corrected.length, ...(corrected.length > 0 ? { correctedKeys: firstNames(corrected) } : {}),
  }, 'cloud write refused');
}
