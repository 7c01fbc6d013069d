// Requests answered "busy" (exception 6) or "acknowledge" (5) wait for their next attempt off the
// line: the line serves other units meanwhile, and the request goes back into the queue when its
// pause is over. The pause grows with each attempt, up to MAX_PAUSE_BACKOFFS times the first; the
// number of attempts is bounded (slow-units.ts).
import type { Timers } from '../../core/time.js';

/** The longest pause, in first pauses (1 s at the default 50 ms): cloud work repeats up to its deadline. */
export const MAX_PAUSE_BACKOFFS = 20;

export class BusyRetries<J> {
  private readonly waiting = new Map<J, () => void>();

  constructor(
    private readonly timers: Timers,
    /** Pause before the first repeat; the n-th repeat waits n times as long, at most MAX_PAUSE_BACKOFFS times (never less than `minPauseMs`). */
    private readonly backoffMs: number,
    private readonly minPauseMs: number,
  ) {}

  /** How long the `attempt`-th repeat (1-based) waits. */
  pauseMs(attempt: number): number {
    return Math.max(this.minPauseMs, this.backoffMs * Math.min(attempt, MAX_PAUSE_BACKOFFS));
  }

  /** Calls `requeue` with the job after its pause, unless `cancelAll` comes first. */
  schedule(job: J, attempt: number, requeue: (job: J) => void): void {
    const cancel = this.timers.setTimer(() => {
      this.waiting.delete(job);
      requeue(job);
    }, this.pauseMs(attempt));
    this.waiting.set(job, cancel);
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
