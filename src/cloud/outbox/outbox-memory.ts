// The memory half of the memory-first outbox (pure: no I/O, time passed in). Per-device FIFOs
// of reports not yet on disk, their byte counts, and the deadline by which each must be on disk.
import type { OutboxRecord } from '../../core/outbox-types.js';

export interface MemoryRecord extends OutboxRecord {
  device: string;
  /** The report must be on disk by then unless acknowledged before (Unix ms). */
  deadline: number;
}

export interface Removed {
  records: number;
  bytes: number;
}

/**
 * Deadlines fall on a grid of half the window: every report appended within one half-window
 * shares a deadline, so a spill writes them in one transaction, and none waits longer than
 * `durableAfterMs` (a report appended at t is due in (t + w/2, t + w]).
 */
export function deadlineFor(now: number, durableAfterMs: number): number {
  const half = durableAfterMs / 2;
  if (half < 1) return now;
  return (Math.floor(now / half) + 2) * half;
}

export class MemoryQueue {
  private readonly fifos = new Map<string, MemoryRecord[]>();
  private readonly bytesOf = new Map<string, number>();
  private total = 0;
  private totalBytes = 0;

  /** `overheadBytes`: what a record costs in memory beyond its payload (objects, buffer, entry), counted in its bytes. */
  constructor(private readonly durableAfterMs: number, private readonly overheadBytes = 0) {}

  get size(): number {
    return this.total;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  /** Takes a report appended at `now`; seq must grow with every push. */
  push(device: string, seq: number, ts: number, payload: Buffer, now: number): void {
    let fifo = this.fifos.get(device);
    if (!fifo) {
      fifo = [];
      this.fifos.set(device, fifo);
    }
    fifo.push({ device, seq, ts, payload, deadline: deadlineFor(now, this.durableAfterMs) });
    this.total += 1;
    const cost = payload.length + this.overheadBytes;
    this.totalBytes += cost;
    this.bytesOf.set(device, (this.bytesOf.get(device) ?? 0) + cost);
  }

  /** Up to `limit` records of a device with seq > afterSeq, oldest first. */
  after(device: string, afterSeq: number, limit: number): MemoryRecord[] {
    const fifo = this.fifos.get(device);
    if (!fifo || limit <= 0) return [];
    let start = 0;
    // Binary search: seqs grow along the FIFO.
    let high = fifo.length;
    while (start < high) {
      const mid = (start + high) >>> 1;
      if (fifo[mid].seq <= afterSeq) start = mid + 1;
      else high = mid;
    }
    return fifo.slice(start, start + limit);
  }

  /** Removes a device's records with seq <= upToSeq (acknowledged). */
  ackThrough(device: string, upToSeq: number): Removed {
    const fifo = this.fifos.get(device);
    const removed = { records: 0, bytes: 0 };
    if (!fifo) return removed;
    let n = 0;
    while (n < fifo.length && fifo[n].seq <= upToSeq) {
      removed.bytes += fifo[n].payload.length + this.overheadBytes;
      n += 1;
    }
    removed.records = n;
    this.remove(device, fifo, n, removed.bytes);
    return removed;
  }

  /** Removes a device's oldest records until at least `excessBytes` are freed (or none are left). */
  dropOldestOf(device: string, excessBytes: number): Removed {
    const fifo = this.fifos.get(device);
    const removed = { records: 0, bytes: 0 };
    if (!fifo) return removed;
    while (removed.records < fifo.length && removed.bytes < excessBytes) {
      removed.bytes += fifo[removed.records].payload.length + this.overheadBytes;
      removed.records += 1;
    }
    this.remove(device, fifo, removed.records, removed.bytes);
    return removed;
  }

  /**
   * Frees `excessBytes` fairly: each record dropped is the oldest of the device holding the most
   * bytes (here plus `heldElsewhere`, e.g. its disk rows), so a fast device loses its own history
   * before a slow one loses any of its outage. Returns what each device lost.
   */
  dropFairly(excessBytes: number, heldElsewhere: (device: string) => number = () => 0): Map<string, Removed> {
    const dropped = new Map<string, Removed>();
    let freed = 0;
    while (freed < excessBytes && this.total > 0) {
      const device = this.largestDevice(heldElsewhere);
      if (device === undefined) break;
      const one = this.dropOldestOf(device, 1);
      freed += one.bytes;
      const entry = dropped.get(device) ?? { records: 0, bytes: 0 };
      entry.records += one.records;
      entry.bytes += one.bytes;
      dropped.set(device, entry);
    }
    return dropped;
  }

  deviceBytes(device: string): number {
    return this.bytesOf.get(device) ?? 0;
  }

  deviceCount(device: string): number {
    return this.fifos.get(device)?.length ?? 0;
  }

  /** The earliest deadline of any record held; undefined when empty. */
  nextDeadline(): number | undefined {
    let earliest: number | undefined;
    for (const fifo of this.fifos.values()) {
      const head = fifo[0];
      if (head !== undefined && (earliest === undefined || head.deadline < earliest)) earliest = head.deadline;
    }
    return earliest;
  }

  /** True when some record has reached its deadline at `now`. */
  isDue(now: number): boolean {
    const next = this.nextDeadline();
    return next !== undefined && next <= now;
  }

  /**
   * Every record of each device whose oldest record is due at `now`, in seq order; the queue is
   * unchanged. A device that let one report reach its deadline is not being acknowledged: its
   * younger reports go in the same write, so an outage costs one write per window, not two.
   */
  due(now: number): MemoryRecord[] {
    const out: MemoryRecord[] = [];
    for (const fifo of this.fifos.values()) {
      if (fifo.length > 0 && fifo[0].deadline <= now) out.push(...fifo);
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  /** Every record held, in seq order (what a spill writes); the queue is unchanged. */
  all(): MemoryRecord[] {
    return [...this.fifos.values()].flat().sort((a, b) => a.seq - b.seq);
  }

  /** Sample time of the oldest record held (by seq). */
  oldestTs(): number | undefined {
    const device = this.oldestDevice();
    return device === undefined ? undefined : this.fifos.get(device)?.[0]?.ts;
  }

  devices(): string[] {
    return [...this.fifos].filter(([, f]) => f.length > 0).map(([d]) => d);
  }

  private oldestDevice(): string | undefined {
    let best: MemoryRecord | undefined;
    for (const fifo of this.fifos.values()) {
      const head = fifo[0];
      if (head !== undefined && (best === undefined || head.seq < best.seq)) best = head;
    }
    return best?.device;
  }

  private largestDevice(heldElsewhere: (device: string) => number): string | undefined {
    let best: string | undefined;
    let most = -1;
    for (const [device, bytes] of this.bytesOf) {
      const held = bytes + heldElsewhere(device);
      if (held > most) {
        most = held;
        best = device;
      }
    }
    return best;
  }

  private remove(device: string, fifo: MemoryRecord[], n: number, bytes: number): void {
    if (n === 0) return;
    fifo.splice(0, n);
    const left = (this.bytesOf.get(device) ?? 0) - bytes;
    if (fifo.length === 0) {
      this.fifos.delete(device);
      this.bytesOf.delete(device);
    } else {
      this.bytesOf.set(device, left);
    }
    this.total -= n;
    this.totalBytes -= bytes;
  }
}
