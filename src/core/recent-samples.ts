// The last N samples of a figure (a queue wait), for percentiles over recent behaviour in bounded memory.
export class RecentSamples {
  private readonly values: number[] = [];
  private next = 0;

  constructor(private readonly capacity = 1024) {}

  add(value: number): void {
    if (this.values.length < this.capacity) this.values.push(value);
    else this.values[this.next] = value;
    this.next = (this.next + 1) % this.capacity;
  }

  /** Nearest-rank percentile (0..100) of the samples kept; undefined without any. */
  percentile(p: number): number | undefined {
    if (this.values.length === 0) return undefined;
    const sorted = [...this.values].sort((a, b) => a - b);
    const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
    return sorted[rank - 1];
  }
}
