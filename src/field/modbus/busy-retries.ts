// The busy repeats: a request answered "busy" (exception 6) or "acknowledge" (5) waits for its next
// attempt off the line (the line serves other units meanwhile) and goes back into the queue when
// its pause is over, admitted again like any request. The pause grows with each attempt, up to
// MAX_PAUSE_BACKOFFS times the first. Attempts are bounded by `busyRetries`; cloud work (a write,
// its read-back, a cloud read) goes on repeating while its next attempt starts within its own
// deadline (`writes.maxWaitMs`), so a unit busy for a second still takes the write. Busy to the
// last repeat is a failure for cool-down (bus-outcomes.ts). After "acknowledge" (the unit accepted
// a long request and is at work on it) the identical request is the poll for its completion: at
// most one a request timeout, the unit's silence meanwhile no failure (bus-outcomes.ts).
import type { BusConfig } from '../../core/config/site-types.js';
import type { Clock, Timers } from '../../core/time.js';
import { ModbusExceptionError } from './errors.js';

/** The longest pause, in first pauses (1 s at the default 50 ms): cloud work repeats up to its deadline. */
export const MAX_PAUSE_BACKOFFS = 20;
const DEFAULT_BUSY_BACKOFF_MS = 50;

export interface BusyJob {
  timeoutMs: number;
  /** Repeats after "busy" so far. */
  busyAttempts: number;
  /** Cloud work: monotonic ms until which it may wait (and repeat after "busy"). */
  waitUntil?: number;
  reject: (err: unknown) => void;
}

export interface BusyRetriesContext<J> {
  config: BusConfig;
  clock: Clock;
  timers: Timers;
  /** Pause before the first repeat (default 50 ms); never less than `interFrameDelayMs`. */
  busyBackoffMs: number | undefined;
  interFrameDelayMs: number;
  isUp(): boolean;
  /** Puts a job back into the queue and pumps; false when the queue is full. */
  requeue(job: J): boolean;
  downError(): Error;
  /** A repeat after "busy" was scheduled (counted). */
  onBusyRepeat(): void;
}

export class BusyRetries<J extends BusyJob> {
  private readonly waiting = new Map<J, () => void>();
  private readonly backoffMs: number;

  constructor(private readonly ctx: BusyRetriesContext<J>) {
    this.backoffMs = ctx.busyBackoffMs ?? DEFAULT_BUSY_BACKOFF_MS;
  }

  /** How long the `attempt`-th repeat (1-based) waits. */
  pauseMs(attempt: number): number {
    return Math.max(this.ctx.interFrameDelayMs, this.backoffMs * Math.min(attempt, MAX_PAUSE_BACKOFFS));
  }

  /** `job` failed with `err`: true when it was answered "busy" and repeats after a pause (back into the queue then). */
  afterFailure(job: J, err: unknown): boolean {
    if (!(err instanceof ModbusExceptionError && err.isBusy) || !this.repeats(job) || !this.ctx.isUp()) return false;
    job.busyAttempts += 1;
    this.ctx.onBusyRepeat();
    const cancel = this.ctx.timers.setTimer(() => {
      this.waiting.delete(job);
      if (!this.ctx.isUp()) job.reject(this.ctx.downError());
      else if (!this.ctx.requeue(job)) job.reject(err);
    }, err.code === 5 ? Math.max(job.timeoutMs, this.pauseMs(job.busyAttempts)) : this.pauseMs(job.busyAttempts));
    this.waiting.set(job, cancel);
    return true;
  }

  /** `busyRetries` repeats (0: none at all); cloud work also while its next attempt starts before its deadline. */
  private repeats(job: J): boolean {
    const retries = this.ctx.config.busyRetries;
    if (job.busyAttempts < retries) return true;
    return retries > 0 && job.waitUntil !== undefined && this.ctx.clock.now() + this.pauseMs(job.busyAttempts + 1) < job.waitUntil;
  }

  get size(): number {
    return this.waiting.size;
  }

  /** Its owner cancelled `job` while it paused: no repeat; false when it is not pausing. */
  cancel(job: J): boolean {
    const cancel = this.waiting.get(job);
    if (!cancel) return false;
    cancel();
    this.waiting.delete(job);
    return true;
  }

  /** The bus stops or goes down: every waiting job is handed back to be failed. */
  cancelAll(): J[] {
    const jobs = [...this.waiting.keys()];
    for (const cancel of this.waiting.values()) cancel();
    this.waiting.clear();
    return jobs;
  }
}
