// Bounded two-level FIFO: writes and commands ('high') are served before polls ('normal'), but
// while polls wait, 'high' work may take at most `highShare` of the bus time (a cloud flood must
// not starve polling). Within a level, strict arrival order, so every unit gets its turn.

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

  shift(): T | undefined {
    const highWaiting = this.highHead < this.high.length;
    const normalWaiting = this.normalHead < this.normal.length;
    if (highWaiting && !normalWaiting) return this.take('high');
    if (highWaiting && this.balanceMs >= 0) {
      const item = this.take('high');
      if (this.highShare < 1 && isWeakKey(item)) this.jumped.add(item);
      return item;
    }
    if (normalWaiting) return this.take('normal');
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
