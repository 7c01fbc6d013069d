// Bounded two-level FIFO: writes and commands ('high') are served before polls ('normal'), but
// while a poll could start instead, 'high' work may take at most `highShare` of the bus time (a cloud flood must
// not starve polling). Within a level, arrival order among the items the bus may start now (a
// unit already served is passed over, keeping its place), so every unit gets its turn.

export type Priority = 'high' | 'normal';

/** Default share of bus time that 'high' work may take while polls are waiting. */
export const DEFAULT_HIGH_SHARE = 0.5;

export class RequestQueue<T> {
  private readonly high: T[] = [];
  private readonly normal: T[] = [];
  private highHead = 0;
  private normalHead = 0;
  /**
   * 'high' items started while 'normal' ones were waiting: their bus time is charged. Weak, so an
   * item the bus refuses before it runs (cool-down) is simply forgotten.
   */
  private jumped = new WeakSet<WeakKey>();
  /**
   * Bus-time balance of 'high' work against waiting polls (ms): a jump costs d * (1 - share), a
   * poll earns d * share back; 'high' jumps only while it is not negative, so in the long run it
   * gets `share` of the time.
   */
  private balanceMs = 0;

  constructor(readonly limit: number, private readonly highShare = 1) {
    if (!(highShare > 0 && highShare <= 1)) throw new RangeError(`highShare must be in (0, 1], got ${highShare}`);
  }

  get size(): number {
    return this.high.length - this.highHead + this.normal.length - this.normalHead;
  }

  /** false when full: the caller rejects the request. */
  push(item: T, priority: Priority): boolean {
    if (this.size >= this.limit) return false;
    (priority === 'high' ? this.high : this.normal).push(item);
    return true;
  }

  /**
   * The next item to start: the oldest `eligible` one ('high' before 'normal' within the share),
   * removed; items passed over (a unit already busy) keep their places.
   */
  shift(eligible: (item: T) => boolean = () => true): T | undefined {
    const high = this.firstEligible('high', eligible);
    const normal = this.firstEligible('normal', eligible);
    if (high !== undefined && (normal === undefined || this.balanceMs >= 0)) {
      const item = this.takeAt('high', high);
      // A jump only when a poll could have started instead (not when every waiting poll's unit is busy).
      if (normal !== undefined && this.highShare < 1 && isWeakKey(item)) this.jumped.add(item);
      return item;
    }
    if (normal !== undefined) return this.takeAt('normal', normal);
    return undefined;
  }

  /** The bus reports how long a started item held the line (ms). */
  charge(item: T, priority: Priority, busyMs: number): void {
    const ms = Math.max(0, busyMs);
    if (isWeakKey(item) && this.jumped.delete(item)) this.balanceMs -= ms * (1 - this.highShare);
    // Credit is kept up to one poll's worth, so short jumps after a long poll still get their share.
    else if (priority === 'normal') this.balanceMs = Math.min(this.balanceMs + ms * this.highShare, ms * this.highShare);
    // No poll waiting any more: nothing is owed.
    if (this.normalHead >= this.normal.length) this.balanceMs = 0;
  }

  private firstEligible(priority: Priority, eligible: (item: T) => boolean): number | undefined {
    const list = priority === 'high' ? this.high : this.normal;
    for (let i = priority === 'high' ? this.highHead : this.normalHead; i < list.length; i += 1) {
      if (eligible(list[i] as T)) return i;
    }
    return undefined;
  }

  private takeAt(priority: Priority, index: number): T {
    const list = priority === 'high' ? this.high : this.normal;
    if (index === (priority === 'high' ? this.highHead : this.normalHead)) return this.take(priority);
    return list.splice(index, 1)[0] as T;
  }

  private take(priority: Priority): T {
    const list = priority === 'high' ? this.high : this.normal;
    const head = priority === 'high' ? this.highHead++ : this.normalHead++;
    const item = list[head] as T;
    // Compact now and then instead of Array.shift() on every take (O(1) amortised).
    if (head + 1 >= 64 && head + 1 >= list.length / 2) {
      list.splice(0, head + 1);
      if (priority === 'high') this.highHead = 0;
      else this.normalHead = 0;
    }
    return item;
  }

  /** Removes and returns everything (bus down or stopped). */
  drain(): T[] {
    const all = [...this.high.slice(this.highHead), ...this.normal.slice(this.normalHead)];
    this.high.length = 0;
    this.normal.length = 0;
    this.highHead = 0;
    this.normalHead = 0;
    this.jumped = new WeakSet<WeakKey>();
    this.balanceMs = 0;
    return all;
  }
}

/** Items are the bus's job objects; primitives (in tests) are simply never charged as jumps. */
function isWeakKey(item: unknown): item is WeakKey {
  return (typeof item === 'object' && item !== null) || typeof item === 'function';
}
