// Bounded two-level FIFO: writes and commands ('high') are served before polls ('normal');
// within a level, strict arrival order, so every unit on the line gets its turn.

export type Priority = 'high' | 'normal';

export class RequestQueue<T> {
  private readonly high: T[] = [];
  private readonly normal: T[] = [];
  private highHead = 0;
  private normalHead = 0;

  constructor(readonly limit: number) {}

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
    if (this.highHead < this.high.length) return this.take('high');
    if (this.normalHead < this.normal.length) return this.take('normal');
    return undefined;
  }

  /** The first item (high before normal, oldest first) that `eligible` accepts, removed; others keep their places. */
  shiftFirst(eligible: (item: T) => boolean): T | undefined {
    for (const priority of ['high', 'normal'] as const) {
      const list = priority === 'high' ? this.high : this.normal;
      const head = priority === 'high' ? this.highHead : this.normalHead;
      for (let i = head; i < list.length; i += 1) {
        if (!eligible(list[i] as T)) continue;
        if (i === head) return this.take(priority);
        return list.splice(i, 1)[0] as T;
      }
    }
    return undefined;
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
    return all;
  }
}
