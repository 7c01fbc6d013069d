// Repeating a read that timed out (RTU framing): a frame lost to line noise costs one timeout, not
// the sample. The repeat is the identical request (same unit, function, address and count), so a
// late answer of the first copy is a true reading of the same registers, only older; the late-reply
// guard lets the identical request through and holds every other request of its shape as before
// (late-guard.ts). Bounded: `timeoutRepeats` per read (default once), never a cool-down probe, and
// only for a unit whose previous request was answered, so a dead unit costs one extra timeout, not
// one per request.
import type { BusConfig } from '../../core/config/site-types.js';
import { ModbusTimeoutError } from './errors.js';
import type { ReplyShape } from './transport-types.js';

export const DEFAULT_TIMEOUT_REPEATS = 1;

export interface RepeatableJob {
  unit: number;
  /** A read's request as it goes on the wire (undefined: not repeated after a timeout). */
  repeatShape?: ReplyShape;
  /** Repeats after a timeout so far. */
  timeoutRepeats: number;
  /** A cool-down probe is never repeated (a dead unit would pay twice per period). */
  admitted?: 'go' | 'probe';
}

export interface RepeatContext {
  config: BusConfig;
  /** Timeouts in a row of the unit before this one (cooldown.ts). */
  timeoutsInRow(unit: number): number;
  /** Whether the identical request may go now (the guard lets it, the unit is not held whole). */
  mayGoNow(unit: number, shape: ReplyShape): boolean;
}

/** Whether `job`, failed with `err`, is repeated now (the caller requeues it first in line). */
export function repeatsAfterTimeout(job: RepeatableJob, err: unknown, ctx: RepeatContext): boolean {
  if (!(err instanceof ModbusTimeoutError) || job.repeatShape === undefined || job.admitted === 'probe') return false;
  if (ctx.config.kind === 'tcp') return false; // TCP retransmits itself: a timeout there is a slow or dead unit
  if (job.timeoutRepeats >= (ctx.config.timeoutRepeats ?? DEFAULT_TIMEOUT_REPEATS)) return false;
  if (ctx.timeoutsInRow(job.unit) > 0 || !ctx.mayGoNow(job.unit, job.repeatShape)) return false;
  job.timeoutRepeats += 1;
  return true;
}
