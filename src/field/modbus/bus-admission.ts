// Which waiting request of a bus may go on the line now: one at a time per unit unless it serves
// several, never anything a late reply still awaited could be taken for, and not to a unit that
// is cooling down. A repeat after "busy" is admitted again like any request (a late reply may
// have become due while it paused), keeping its probe if it was its unit's probe.
import type { Clock } from '../../core/time.js';
import type { Counter } from './bus-outcomes.js';
import type { Job } from './bus-types.js';
import type { UnitHealthTracker } from './cooldown.js';
import { UnitCoolingDownError, UnitLateReplyPendingError } from './errors.js';
import type { SlowUnits } from './slow-units.js';
import { wireShapes } from './bus-request.js';

/** `pieceCount`: a read that must go as reads of at most that many registers or bits (late-guard.ts). */
export type JobAdmission = { kind: 'go' | 'probe'; pieceCount?: number } | { kind: 'refuse'; error: Error };

export class BusAdmission {
  /** Requests in flight per unit: a unit not listed as concurrent gets one at a time. */
  private readonly unitsInFlight = new Map<number, number>();

  constructor(
    private readonly concurrentUnits: ReadonlySet<number>,
    private readonly slow: SlowUnits<Job>,
    private readonly health: UnitHealthTracker,
    private readonly counters: Record<Counter, number>,
    private readonly clock: Clock,
  ) {}

  /** One request at a time per unit on a TCP connection, unless the device says it serves several. */
  mayStart(job: Job): boolean {
    return job.op.kind === 'raw' || this.concurrentUnits.has(job.unit) || !this.unitsInFlight.has(job.unit);
  }

  /** Raw stream bytes address no unit: neither guard nor cool-down applies. */
  admit(job: Job): JobAdmission {
    if (job.op.kind === 'raw') return { kind: 'go' };
    const now = this.clock.now();
    const guard = this.slow.guardAdmission(job.unit, wireShapes(job.op), job.op.kind === 'read');
    const guardWaitMs = guard.kind === 'wait' ? guard.retryInMs : undefined;
    const cooling = this.health.view(job.unit);
    if (guardWaitMs !== undefined && cooling.state === 'cooling-down') {
      // The cool-down says more; its probe waits for the guard too.
      this.counters.cooldownRejects += 1;
      return { kind: 'refuse', error: new UnitCoolingDownError(job.unit, Math.max(guardWaitMs, (cooling.nextProbeAt ?? now) - now), this.health.lastFailure(job.unit)) };
    }
    if (guardWaitMs !== undefined) {
      this.counters.lateGuardRejects += 1;
      return { kind: 'refuse', error: new UnitLateReplyPendingError(job.unit, guardWaitMs, guard.kind === 'wait' && guard.lateSeen) };
    }
    // A repeat after "busy" of the unit's probe is still that probe.
    const admission = job.admitted === 'probe' && cooling.state === 'cooling-down' ? { kind: 'probe' as const } : this.health.admit(job.unit, now);
    if (admission.kind !== 'reject') return { kind: admission.kind, ...(guard.kind === 'split' ? { pieceCount: guard.pieceCount } : {}) };
    this.counters.cooldownRejects += 1;
    return { kind: 'refuse', error: new UnitCoolingDownError(job.unit, admission.retryInMs, this.health.lastFailure(job.unit)) };
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
