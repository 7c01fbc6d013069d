// Bounded two-level FIFO: writes and commands ('high') are served before polls ('normal'), but
// while a poll could start instead, 'high' work may take at most `highShare` of the bus time (a cloud flood must
// not starve polling). Within a level, arrival order among the items the bus may start now (a
// unit already served is passed over, keeping its place), so every unit gets its turn. Requests of
// a bus's share (other Modbus masters, docs/share.md) are a class of their own between the two:
// ahead of polls only within `lineShare` of the bus time while polls wait, the same way.

export type Priority = 'high' | 'share' | 'normal';

/** Default share of bus time that 'high' work may take while polls are waiting. */
export const DEFAULT_HIGH_SHARE = 0.5;

export class RequestQueue<T> {
  private readonly high: T[] = [];
  private readonly normal: T[] = [];
  private readonly shared: T[] = [];
  private highHead = 0;
  private normalHead = 0;
  private sharedHead = 0;
  /** Share requests started while polls waited (charged like 'high' jumps, against `lineShare`). */
  private sharedJumped = new WeakSet<WeakKey>();
  private sharedBalanceMs = 0;
  private lineShare = 1;
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
    return this.high.length - this.highHead + this.normal.length - this.normalHead + this.shared.length - this.sharedHead;
  }

  /** Share of bus time the share class may take while polls wait, (0, 1]. */
  setLineShare(share: number): void {
    if (!(share > 0 && share <= 1)) throw new RangeError(`lineShare must be in (0, 1], got ${share}`);
    this.lineShare = share;
  }

  /** false when full: the caller rejects the request. */
  push(item: T, priority: Priority): boolean {
    if (this.size >= this.limit) return false;
    this.listOf(priority).push(item);
    return true;
  }

  /** First in its class (a read repeated after a timeout goes next); false when full. */
  pushFirst(item: T, priority: Priority): boolean {
    if (this.size >= this.limit) return false;
    this.listOf(priority).splice(this.headOf(priority), 0, item);
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
    const shared = this.firstEligible('share', eligible);
    if (shared !== undefined && (normal === undefined || this.sharedBalanceMs >= 0)) {
      const item = this.takeAt('share', shared);
      if (normal !== undefined && this.lineShare < 1 && isWeakKey(item)) this.sharedJumped.add(item);
      return item;
    }
    if (normal !== undefined) return this.takeAt('normal', normal);
    return undefined;
  }

  /** The bus reports how long a started item held the line (ms). */
  charge(item: T, priority: Priority, busyMs: number): void {
    const ms = Math.max(0, busyMs);
    if (isWeakKey(item) && this.jumped.delete(item)) this.balanceMs -= ms * (1 - this.highShare);
    else if (isWeakKey(item) && this.sharedJumped.delete(item)) this.sharedBalanceMs -= ms * (1 - this.lineShare);
    // Credit is kept up to one poll's worth, so short jumps after a long poll still get their share.
    else if (priority === 'normal') {
      this.balanceMs = Math.min(this.balanceMs + ms * this.highShare, ms * this.highShare);
      this.sharedBalanceMs = Math.min(this.sharedBalanceMs + ms * this.lineShare, ms * this.lineShare);
    }
    // No poll waiting any more: nothing is owed.
    if (this.normalHead >= this.normal.length) {
      this.balanceMs = 0;
      this.sharedBalanceMs = 0;
    }
  }

  private listOf(priority: Priority): T[] {
    return priority === 'high' ? this.high : priority === 'share' ? this.shared : this.normal;
  }

  private headOf(priority: Priority): number {
    return priority === 'high' ? this.highHead : priority === 'share' ? this.sharedHead : this.normalHead;
  }

  private firstEligible(priority: Priority, eligible: (item: T) => boolean): number | undefined {
    const list = this.listOf(priority);
    for (let i = this.headOf(priority); i < list.length; i += 1) {
      if (eligible(list[i] as T)) return i;
    }
    return undefined;
  }

  private takeAt(priority: Priority, index: number): T {
    const list = this.listOf(priority);
    if (index === this.headOf(priority)) return this.take(priority);
    return list.splice(index, 1)[0] as T;
  }

  private take(priority: Priority): T {
    const list = this.listOf(priority);
    const head = this.headOf(priority);
    this.setHead(priority, head + 1);
    const item = list[head] as T;
    // Compact now and then instead of Array.shift() on every take (O(1) amortised).
    if (head + 1 >= 64 && head + 1 >= list.length / 2) {
      list.splice(0, head + 1);
      this.setHead(priority, 0);
    }
    return item;
  }

  private setHead(priority: Priority, head: number): void {
    if (priority === 'high') this.highHead = head;
    else if (priority === 'share') this.sharedHead = head;
    else this.normalHead = head;
  }

  /** Takes `item` out wherever it waits (its owner cancelled it); false when it is not queued. */
  remove(item: T, priority: Priority): boolean {
    const list = this.listOf(priority);
    const index = list.indexOf(item, this.headOf(priority));
    if (index < 0) return false;
    list.splice(index, 1);
    return true;
  }

  /** Removes and returns everything (bus down or stopped). */
  drain(): T[] {
    const all = [...this.high.slice(this.highHead), ...this.shared.slice(this.sharedHead), ...this.normal.slice(this.normalHead)];
    this.high.length = 0;
    this.normal.length = 0;
    this.shared.length = 0;
    this.highHead = 0;
    this.normalHead = 0;
    this.sharedHead = 0;
    this.jumped = new WeakSet<WeakKey>();
    this.sharedJumped = new WeakSet<WeakKey>();
    this.balanceMs = 0;
    this.sharedBalanceMs = 0;
    return all;
  }
}

/** Items are the bus's job objects; primitives (in tests) are simply never charged as jumps. */
function isWeakKey(item: unknown): item is WeakKey {
  return (typeof item === 'object' && item !== null) || typeof item === 'function';
}
