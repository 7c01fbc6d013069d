// Runs callbacks at microsecond targets, in order. setTimeout alone is ms-granular and often late,
// so it sleeps until ~2 ms before the target and then re-checks process.hrtime on each event-loop
// turn (setImmediate: the loop keeps serving I/O, no busy spin inside one tick).

export type MicroClock = () => number;

const origin = process.hrtime.bigint();
/** Monotonic µs since module load. */
export const hrtimeMicros: MicroClock = () => Number(process.hrtime.bigint() - origin) / 1000;

const FINE_WINDOW_MICROS = 2000;

interface Job {
  atMicros: number;
  run: () => void;
}

export class PreciseQueue {
  private readonly jobs: Job[] = [];
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private lastAt = 0;
  private closed = false;

  constructor(
    readonly now: MicroClock = hrtimeMicros,
    private readonly onError: (err: unknown) => void = () => {},
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
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.timer = undefined;
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
    if (remaining > FINE_WINDOW_MICROS) {
      this.timer = setTimeout(() => this.arm(), Math.floor((remaining - FINE_WINDOW_MICROS) / 1000));
    } else {
      this.immediate = setImmediate(() => this.arm());
    }
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
