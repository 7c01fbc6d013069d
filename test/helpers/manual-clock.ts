// A clock for unit tests: time moves only when the test advances it; timers fire in due order.
// The wall clock runs beside it at a fixed offset (0 unless a test steps it, as NTP would).
import type { EpochMs, MonoMs, Time, WallClock } from '../../src/core/time.js';

interface Pending {
  at: number;
  order: number;
  cb: () => void;
}

export class ManualClock implements Time, WallClock {
  time: number;
  /** Wall clock minus monotonic clock; stepWall() changes it without firing or moving any timer. */
  wallOffsetMs = 0;
  /** Every delay a timer was set for, in order (what the code under test waited). */
  readonly delays: number[] = [];
  private pending: Pending[] = [];
  private order = 0;

  constructor(start = 1_000_000) {
    this.time = start;
  }

  now(): MonoMs {
    return this.time as MonoMs;
  }

  wallNow(): EpochMs {
    return (this.time + this.wallOffsetMs) as EpochMs;
  }

  /** Steps the wall clock alone (an NTP step): the monotonic time and every timer stay as they are. */
  stepWall(ms: number): void {
    this.wallOffsetMs += ms;
  }

  random(): number {
    return 0.5;
  }

  setTimer(cb: () => void, ms: number): () => void {
    const entry: Pending = { at: this.time + Math.max(0, ms), order: this.order++, cb };
    this.pending.push(entry);
    this.delays.push(ms);
    return () => {
      this.pending = this.pending.filter((p) => p !== entry);
    };
  }

  /** Timers set and not yet fired or cancelled. */
  get sleeping(): number {
    return this.pending.length;
  }

  /** Moves time forward, firing each due timer at its own instant (timers it sets count from there). */
  advance(ms: number): void {
    const target = this.time + ms;
    for (let next = this.takeDue(target); next; next = this.takeDue(target)) next.cb();
    this.time = target;
  }

  /**
   * Like advance(), but lets promise chains and I/O callbacks run after each timer fires, so what
   * a timer starts (a reply, the next poll) settles at that instant before later timers are due.
   */
  async advanceAsync(ms: number): Promise<void> {
    const target = this.time + ms;
    await eventLoopTurns();
    for (let next = this.takeDue(target); next; next = this.takeDue(target)) {
      next.cb();
      await eventLoopTurns();
    }
    this.time = target;
    await eventLoopTurns();
  }

  /** Removes the earliest timer due by target and moves the time to its instant. */
  private takeDue(target: number): Pending | undefined {
    const next = this.pending.filter((p) => p.at <= target).sort((a, b) => a.at - b.at || a.order - b.order)[0];
    if (!next) return undefined;
    this.pending = this.pending.filter((p) => p !== next);
    this.time = Math.max(this.time, next.at);
    return next;
  }

  /** Jumps to an instant: forward fires the timers due on the way; backward (a clock set back) fires none. */
  set(ms: number): void {
    if (ms >= this.time) this.advance(ms - this.time);
    else this.time = ms;
  }
}

/** Lets promise chains and I/O callbacks run without letting any real time matter. */
export async function eventLoopTurns(turns = 10): Promise<void> {
  for (let i = 0; i < turns; i += 1) await new Promise((resolve) => setImmediate(resolve));
}
