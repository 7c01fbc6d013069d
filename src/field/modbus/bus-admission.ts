// Which waiting request of a bus may go on the line now: one at a time per unit unless it serves
// several, and never to a unit whose late reply is still awaited or that is cooling down.
import type { Clock } from '../../core/time.js';
import type { Counter } from './bus-outcomes.js';
import type { Job } from './bus-types.js';
import type { UnitHealthTracker } from './cooldown.js';
import { UnitCoolingDownError, UnitLateReplyPendingError } from './errors.js';
import type { SlowUnits } from './slow-units.js';

export type JobAdmission = { kind: 'go' | 'probe' } | { kind: 'refuse'; error: Error };

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

  /** Raw stream bytes address no unit: neither guard nor cool-down applies; a repeat after "busy" was admitted already. */
  admit(job: Job): JobAdmission {
    if (job.admitted) return { kind: job.admitted };
    if (job.op.kind === 'raw') return { kind: 'go' };
    const now = this.clock.now();
    const guardWaitMs = this.slow.guardWait(job.unit);
    const cooling = this.health.view(job.unit);
    if (guardWaitMs !== undefined && cooling.state === 'cooling-down') {
      // The cool-down says more; its probe waits for the guard too.
      this.counters.cooldownRejects += 1;
      return { kind: 'refuse', error: new UnitCoolingDownError(job.unit, Math.max(guardWaitMs, (cooling.nextProbeAt ?? now) - now)) };
    }
    if (guardWaitMs !== undefined) {
      this.counters.lateGuardRejects += 1;
      return { kind: 'refuse', error: new UnitLateReplyPendingError(job.unit, guardWaitMs) };
    }
    const admission = this.health.admit(job.unit, now);
    if (admission.kind !== 'reject') return admission;
    this.counters.cooldownRejects += 1;
    return { kind: 'refuse', error: new UnitCoolingDownError(job.unit, admission.retryInMs) };
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
