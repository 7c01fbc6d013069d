// Runs callbacks at microsecond targets, in order. setTimeout alone is ms-granular and often late,
// so it waits with the daemon's precise sleep (a timer for the bulk, then a sleep off the event
// loop) until a quarter millisecond before the target, and polls process.hrtime on each loop turn
// (setImmediate: I/O is still served) for the rest. It used to poll for the last 2 ms: a core spun
// for most of every reply, which on a 2-core box also delayed the master it answered.
import { preciseSleep, type Sleep } from 'fieldgate/workspace-kit';

export type MicroClock = () => number;

/** Polled on loop turns: the sleep's own lateness (about 0.1 ms) would make replies late. */
const POLL_WINDOW_MICROS = 250;

const origin = process.hrtime.bigint();
/** Monotonic µs since module load. */
export const hrtimeMicros: MicroClock = () => Number(process.hrtime.bigint() - origin) / 1000;

interface Job {
  atMicros: number;
  run: () => void;
}

export class PreciseQueue {
  private readonly jobs: Job[] = [];
  private cancelSleep: (() => void) | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private lastAt = 0;
  private closed = false;

  constructor(
    readonly now: MicroClock = hrtimeMicros,
    private readonly onError: (err: unknown) => void = () => {},
    private readonly sleep: Sleep = preciseSleep,
  ) {}

  get pending(): number {
    return this.jobs.length;
  }

  /** Run `run` at `atMicros` (never before an earlier-queued job). */
  push(atMicros: number, run: () => void): void {
    if (this.closed) return;
    const at = Math.max(atMicros, this.lastAt);
    this.lastAt = at;
    this.jobs.push({ atMicros: at, run });
    if (this.jobs.length === 1) this.arm();
  }

  close(): void {
    this.closed = true;
    this.jobs.length = 0;
    this.disarm();
  }

  private disarm(): void {
    this.cancelSleep?.();
    this.cancelSleep = undefined;
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.immediate = undefined;
  }

  private arm(): void {
    this.disarm();
    const head = this.jobs[0];
    if (head === undefined || this.closed) return;
    const remaining = head.atMicros - this.now();
    if (remaining <= 0) {
      this.runDue();
      return;
    }
    if (remaining <= POLL_WINDOW_MICROS) {
      this.immediate = setImmediate(() => this.arm());
      return;
    }
    this.cancelSleep = this.sleep((remaining - POLL_WINDOW_MICROS) / 1000, () => {
      this.cancelSleep = undefined;
      this.arm();
    });
  }

  private runDue(): void {
    const now = this.now();
    while (this.jobs.length > 0 && this.jobs[0].atMicros <= now) {
      const job = this.jobs.shift() as Job;
      try {
        job.run();
      } catch (err) {
        this.onError(err);
      }
      if (this.closed) return;
    }
    this.arm();
  }
}
