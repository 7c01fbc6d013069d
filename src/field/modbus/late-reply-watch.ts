// The late-reply watch of a bus on RTU framing: a unit that timed out is not asked anything its
// late reply could be taken for until that reply was seen or its guard ran out (late-guard.ts, the
// pure rules), and a read that timed out is repeated identically first in line (timeout-repeats.ts)
// when the guard lets it. A late reply is a failure for cool-down (bus-outcomes.ts). The transport
// watches for a late reply exactly as long as the guard holds what it could be taken for (one
// deadline: `guarding`). The busy repeats are busy-retries.ts.
import type { BusConfig } from '../../core/config/site-types.js';
import type { Clock } from '../../core/time.js';
import { ModbusTimeoutError } from './errors.js';
import { configuredGuardMs, DEFAULT_LATE_DECAY, type LateGuardAdmission, LateReplyGuard, type LateUnitView } from './late-guard.js';
import type { ReplyShape } from './transport-types.js';
import { type RepeatableJob, repeatsAfterTimeout } from './timeout-repeats.js';

export { LATE_GUARD_TIMEOUTS } from './late-guard.js';

export interface LateJob extends RepeatableJob {
  unit: number;
  timeoutMs: number;
}

export interface LateReplyWatchContext<J extends LateJob> {
  config: BusConfig;
  clock: Clock;
  /** The transport reports late replies (RTU framing): guard units that timed out. */
  watchesLateReplies: boolean;
  isUp(): boolean;
  /** Puts a job back first in line (a repeat after a timeout) and pumps; false when the queue is full. */
  requeueFirst(job: J): boolean;
  /** Timeouts in a row of the unit so far (cool-down). */
  timeoutsInRow(unit: number): number;
  /** A read that timed out is repeated (counted). */
  onTimeoutRepeat(): void;
  /** The unit is no longer treated as answering late (its lesson decayed). */
  onLateForgotten(unit: number): void;
  /** A late reply came: counted, a cool-down failure, a warning the first time for the unit. */
  onLate(unit: number, answeredAfterMs: number, first: boolean): void;
  /**
   * A timeout's guard started: what could pass for its late reply (`shape`; undefined: not said)
   * is held `guardMs` from now; `wholeUnit` when the unit is asked nothing meanwhile.
   */
  guarding(unit: number, shape: ReplyShape | undefined, guardMs: number, wholeUnit: boolean): void;
}

export class LateReplyWatch<J extends LateJob> {
  private readonly guard: LateReplyGuard | undefined;

  constructor(private readonly ctx: LateReplyWatchContext<J>) {
    const decay = {
      afterAnswers: ctx.config.lateSeenForgetAfterAnswers ?? DEFAULT_LATE_DECAY.afterAnswers,
      afterMs: ctx.config.lateSeenForgetAfterMs ?? DEFAULT_LATE_DECAY.afterMs,
    };
    this.guard = ctx.watchesLateReplies ? new LateReplyGuard(decay) : undefined;
  }

  /**
   * Whether a request to `unit` putting `shapes` on the wire may go now (`splittable`: a single
   * read that may go as shorter reads), given the late replies of the unit still awaited.
   */
  guardAdmission(unit: number, shapes: readonly ReplyShape[], splittable: boolean, repeat = false): LateGuardAdmission {
    const guard = this.guard;
    if (!guard) return { kind: 'go' };
    const now = this.ctx.clock.now();
    if (shapes.length === 0) return guard.admit(unit, undefined, now);
    let result: LateGuardAdmission = { kind: 'go' };
    for (const shape of shapes) {
      const admission = guard.admit(unit, { ...shape, splittable: splittable && shapes.length === 1, repeat }, now);
      if (admission.kind === 'wait') return admission;
      if (admission.kind === 'split') result = admission;
    }
    return result;
  }

  /**
   * A job failed with `err`. A timeout starts its unit's guard; true when the read repeats now
   * (identically, first in line), false when it fails.
   */
  afterFailure(job: J, err: unknown): boolean {
    if (err instanceof ModbusTimeoutError && this.guard) {
      const now = this.ctx.clock.now();
      const applied = this.guard.onTimeout(job.unit, err.request, now, configuredGuardMs(this.ctx.config, job.timeoutMs));
      this.ctx.guarding(job.unit, err.request, applied, this.guard.holdsWholeUnit(job.unit, now));
      const mayGoNow = (unit: number, shape: ReplyShape) => this.guardAdmission(unit, [shape], true, true).kind !== 'wait';
      if (this.ctx.isUp() && repeatsAfterTimeout(job, err, { config: this.ctx.config, timeoutsInRow: this.ctx.timeoutsInRow, mayGoNow })) {
        this.ctx.onTimeoutRepeat();
        if (this.ctx.requeueFirst(job)) return true;
      }
    }
    return false;
  }

  /** `unit` answered in time (`shape`: the request whole, undefined when read as pieces). */
  answered(unit: number, shape: ReplyShape | undefined): void {
    if (this.guard?.onAnswered(unit, shape, this.ctx.clock.now())) this.ctx.onLateForgotten(unit);
  }

  /** The reply of a timed-out request (`request`: its shape) came after all: what it held back may go. */
  lateReply(unit: number, answeredAfterMs: number, request?: ReplyShape): void {
    if (!this.guard) return;
    this.ctx.onLate(unit, Math.round(answeredAfterMs), this.guard.onLateReply(unit, request, answeredAfterMs, this.ctx.clock.now()));
  }

  lateUnits(): LateUnitView[] {
    return this.guard?.list(this.ctx.clock.now()) ?? [];
  }
}
