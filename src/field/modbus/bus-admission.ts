// Which waiting request of a bus may go on the line now: one at a time per unit unless it serves
// several, never anything a late reply still awaited could be taken for, and not to a unit that
// is cooling down. A repeat after "busy" is admitted again like any request (a late reply may
// have become due while it paused), keeping its probe if it was its unit's probe. A request that
// may wait (cloud work, up to `writes.maxWaitMs`) stays in the queue while its unit is guarded or
// cooling down, and is refused only when its wait is over.
import type { Clock } from '../../core/time.js';
import type { Counter } from './bus-outcomes.js';
import type { Job } from './bus-types.js';
import type { UnitHealthTracker } from './cooldown.js';
import { RequestExpiredError, UnitCoolingDownError, UnitLateReplyPendingError } from './errors.js';
import type { LateReplyWatch } from './late-reply-watch.js';
import { addressesUnit, wireShapes } from './bus-request.js';

/** `pieceCount`: a read that must go as reads of at most that many registers or bits (late-guard.ts). */
export type JobAdmission = { kind: 'go' | 'probe'; pieceCount?: number } | { kind: 'refuse'; error: Error };

export class BusAdmission {
  /** Requests in flight per unit: a unit not listed as concurrent gets one at a time. */
  private readonly unitsInFlight = new Map<number, number>();

  constructor(
    private readonly concurrentUnits: ReadonlySet<number>,
    private readonly late: LateReplyWatch<Job>,
    private readonly health: UnitHealthTracker,
    private readonly counters: Record<Counter, number>,
    private readonly clock: Clock,
  ) {}

  /** Earliest epoch ms at which a request left waiting by `mayStart` may be admitted or must be refused. */
  private wakeAt: number | undefined;

  /**
   * One request at a time per unit on a TCP connection, unless the device says it serves several;
   * a request that may wait does not start while its unit is guarded or cooling down.
   */
  mayStart(job: Job): boolean {
    if (!addressesUnit(job.op)) return true;
    if (!this.concurrentUnits.has(job.unit) && this.unitsInFlight.has(job.unit)) return false;
    if (job.waitUntil === undefined) return true;
    const now = this.clock.now();
    if (now >= job.waitUntil) return true; // waited long enough: admitted or refused now
    const waitMs = this.waitFor(job, now);
    if (waitMs === 0) return true;
    this.wakeAt = Math.min(this.wakeAt ?? Infinity, job.waitUntil, now + (waitMs ?? Infinity));
    return false;
  }

  /** Ms until `job` could be admitted: 0 now, undefined when a probe in flight ends. */
  private waitFor(job: Job, now: number): number | undefined {
    const guard = this.late.guardAdmission(job.unit, wireShapes(job.op), job.op.kind === 'read' && job.lengthProbe !== true, job.timeoutRepeats > 0);
    const guardMs = guard.kind === 'wait' ? guard.retryInMs : 0;
    const coolMs = job.admitted === 'probe' ? 0 : this.health.waitFor(job.unit, now);
    return coolMs === undefined ? undefined : Math.max(guardMs, coolMs);
  }

  /** When the bus should look at its queue again for requests left waiting (and forgets it). */
  takeWakeAt(): number | undefined {
    const at = this.wakeAt;
    this.wakeAt = undefined;
    return at;
  }

  /**
   * A request past its queue deadline (RequestOptions.queueDeadlineMs) is refused unsent. Raw
   * stream bytes address no unit: neither guard nor cool-down applies.
   */
  admit(job: Job): JobAdmission {
    const now = this.clock.now();
    if (job.expiresAt !== undefined && now >= job.expiresAt) {
      this.counters.expired += 1;
      return { kind: 'refuse', error: new RequestExpiredError(job.unit, now - job.expiresAt + (job.queueDeadlineMs ?? 0)) };
    }
    if (!addressesUnit(job.op)) return { kind: 'go' };
    const guard = this.late.guardAdmission(job.unit, wireShapes(job.op), job.op.kind === 'read' && job.lengthProbe !== true, job.timeoutRepeats > 0);
    const guardWaitMs = guard.kind === 'wait' ? guard.retryInMs : undefined;
    const cooling = this.health.view(job.unit);
    if (guardWaitMs !== undefined && cooling.state === 'cooling-down') {
      // The cool-down says more; its probe waits for the guard too.
      this.counters.cooldownRejects += 1;
      return { kind: 'refuse', error: new UnitCoolingDownError(job.unit, Math.max(guardWaitMs, (cooling.nextProbeAt ?? now) - now), this.health.lastFailure(job.unit), waited(job, now)) };
    }
    if (guardWaitMs !== undefined) {
      this.counters.lateGuardRejects += 1;
      return { kind: 'refuse', error: new UnitLateReplyPendingError(job.unit, guardWaitMs, guard.kind === 'wait' && guard.lateSeen, waited(job, now)) };
    }
    // A repeat after "busy" of the unit's probe is still that probe.
    const admission = job.admitted === 'probe' && cooling.state === 'cooling-down' ? { kind: 'probe' as const } : this.health.admit(job.unit, now);
    if (admission.kind !== 'reject') return { kind: admission.kind, ...(guard.kind === 'split' ? { pieceCount: guard.pieceCount } : {}) };
    this.counters.cooldownRejects += 1;
    return { kind: 'refuse', error: new UnitCoolingDownError(job.unit, admission.retryInMs, this.health.lastFailure(job.unit), waited(job, now)) };
  }

  started(unit: number): void {
    this.unitsInFlight.set(unit, (this.unitsInFlight.get(unit) ?? 0) + 1);
  }

  finished(unit: number): void {
    const left = (this.unitsInFlight.get(unit) ?? 1) - 1;
    if (left > 0) this.unitsInFlight.set(unit, left);
    else this.unitsInFlight.delete(unit);
  }
}

/** How long a request that could wait has waited in the queue (undefined: it could not). */
function waited(job: Job, now: number): number | undefined {
  return job.waitUntil === undefined || job.queuedAt === undefined ? undefined : now - job.queuedAt;
}
