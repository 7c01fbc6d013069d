// The last 15 minutes of each numeric point, for the page's sparklines: one fixed-size ring per
// point (two Float64Arrays of `capacity`, 16 bytes a sample), at most one sample per slot of
// 15 min / capacity (a newer value in the same slot replaces the older). Time is passed in.
export const HISTORY_WINDOW_MS = 15 * 60_000;

export class PointRing {
  private readonly times: Float64Array;
  private readonly values: Float64Array;
  private start = 0;
  private count = 0;

  constructor(private readonly capacity: number, private readonly slotMs = HISTORY_WINDOW_MS / capacity) {
    this.times = new Float64Array(capacity);
    this.values = new Float64Array(capacity);
  }

  add(ts: number, value: number): void {
    if (this.count > 0) {
      const last = (this.start + this.count - 1) % this.capacity;
      if (ts < this.times[last]) return;
      if (ts - this.times[last] < this.slotMs) {
        this.values[last] = value;
        return;
      }
    }
    const at = (this.start + this.count) % this.capacity;
    this.times[at] = ts;
    this.values[at] = value;
    if (this.count < this.capacity) this.count++;
    else this.start = (this.start + 1) % this.capacity;
  }

  /** [epoch ms, value] pairs within the window ending at `now`, oldest first. */
  since(now: number): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    for (let i = 0; i < this.count; i++) {
      const at = (this.start + i) % this.capacity;
      if (now - this.times[at] <= HISTORY_WINDOW_MS) out.push([this.times[at], this.values[at]]);
    }
    return out;
  }
}

/** The rings of every device's numeric points, made as values first arrive. */
export class PointHistory {
  private readonly rings = new Map<string, Map<string, PointRing>>();

  constructor(private readonly capacity: number) {}

  record(device: string, ts: number, values: Readonly<Record<string, unknown>>): void {
    let points = this.rings.get(device);
    for (const [id, value] of Object.entries(values)) {
      if (typeof value !== 'number' || !Number.isFinite(value)) continue;
      if (!points) this.rings.set(device, (points = new Map()));
      let ring = points.get(id);
      if (!ring) points.set(id, (ring = new PointRing(this.capacity)));
      ring.add(ts, value);
    }
  }

  of(device: string, now: number): Record<string, Array<[number, number]>> {
    const out: Record<string, Array<[number, number]>> = {};
    for (const [id, ring] of this.rings.get(device) ?? []) out[id] = ring.since(now);
    return out;
  }

  /** A removed device's rings go with it. */
  forget(device: string): void {
    this.rings.delete(device);
  }
}
