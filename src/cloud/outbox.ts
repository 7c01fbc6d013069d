// Write-ahead outbox: every report goes to SQLite (group-committed) before it is published, and
// leaves only through ack() after PUBACK. The `write-ahead` mode; see memory-first-outbox.ts.
import { admit, counterIn, enforceCaps, noDrops, reportCapDrops, reportDrops, tally, type DropTally } from './outbox-caps.js';
import { OutboxStore } from './outbox-store.js';
import { systemTime, type Time } from '../core/time.js';
import type { OutboxDeviceStats, OutboxRecord, OutboxStats, ReportOutbox } from '../core/outbox-types.js';
import type { OutboxOptions } from './outbox-options.js';

export type { OutboxDeviceStats, OutboxDropInfo, OutboxRecord, OutboxStats, ReportOutbox } from '../core/outbox-types.js';
export type { OutboxMode, OutboxOptions } from './outbox-options.js';

interface Pending {
  device: string;
  ts: number;
  payload: Buffer;
}

export class Outbox implements ReportOutbox {
  private readonly store: OutboxStore;
  private readonly flushIntervalMs: number;
  private readonly flushRecords: number;
  private readonly counters = new Map<string, OutboxDeviceStats>();
  private pending: Pending[] = [];
  private cancelTimer: (() => void) | undefined;
  private readonly time: Time;
  private closed = false;

  constructor(private readonly options: OutboxOptions) {
    this.flushIntervalMs = options.flushIntervalMs ?? 50;
    this.flushRecords = options.flushRecords ?? 500;
    this.time = options.time ?? systemTime;
    this.store = new OutboxStore(options.path, { synchronous: 'NORMAL' });
    for (const row of this.store.totals()) this.counters.set(row.device, { depth: row.depth, bytes: row.bytes, dropped: 0 });
  }

  /** Buffer one report; committed within flushIntervalMs or flushRecords, or by flush()/close(). */
  append(device: string, payload: Buffer | string, ts: number): void {
    if (this.closed) throw new Error('outbox is closed');
    const bytes = admit(device, payload, this.options.maxBytesPerDevice, this.counters, this.options.onDrop);
    if (bytes === undefined) return;
    this.pending.push({ device, ts, payload: bytes });
    if (this.pending.length >= this.flushRecords) {
      this.flush();
    } else if (this.cancelTimer === undefined) {
      this.cancelTimer = this.time.setTimer(() => this.flushSafely(), this.flushIntervalMs, { unref: true });
    }
  }

  /** Commit every buffered append in one transaction, then enforce the byte caps. */
  flush(): void {
    if (this.cancelTimer !== undefined) {
      this.cancelTimer();
      this.cancelTimer = undefined;
    }
    if (this.pending.length === 0 || this.closed) return;
    const batch = this.pending;
    this.pending = [];
    const touched = new Set<string>();
    const before = this.snapshotCounters();
    let drops = noDrops();
    try {
      this.store.transaction(() => {
        for (const record of batch) {
          this.store.insert(record.device, record.ts, record.payload);
          const counter = this.counter(record.device);
          counter.depth += 1;
          counter.bytes += record.payload.length;
          touched.add(record.device);
        }
        drops = enforceCaps(this.store, this.counters, touched, this.options);
      });
    } catch (err) {
      // Rolled back: restore the counters and keep the batch, bounded, for the next commit.
      this.restoreCounters(before);
      this.pending = batch.concat(this.pending);
      this.trimPending();
      throw err;
    }
    reportCapDrops(drops, this.options.onDrop);
    this.options.onCommit?.(touched);
  }

  peek(device: string, limit: number, afterSeq = 0): OutboxRecord[] {
    if (this.closed) return [];
    return this.store.after(device, afterSeq, limit);
  }

  ack(device: string, upToSeq: number): number {
    if (this.closed) return 0;
    const gone = this.store.transaction(() => this.store.deleteThrough(device, upToSeq));
    const counter = this.counter(device);
    counter.depth -= gone.records;
    counter.bytes -= gone.bytes;
    return gone.records;
  }

  stats(): OutboxStats {
    const devices: Record<string, OutboxDeviceStats> = {};
    let depth = 0;
    let bytes = 0;
    let dropped = 0;
    for (const [device, counter] of this.counters) {
      devices[device] = { ...counter };
      depth += counter.depth;
      bytes += counter.bytes;
      dropped += counter.dropped;
    }
    const oldestTs = this.closed || depth === 0 ? this.pending[0]?.ts : this.store.oldestSampleTs();
    return { devices, depth, bytes, dropped, buffered: this.pending.length, onDisk: depth, diskBytes: bytes, oldestTs };
  }

  devicesWithBacklog(): string[] {
    return [...this.counters].filter(([, c]) => c.depth > 0).map(([device]) => device);
  }

  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.store.close();
  }

  private flushSafely(): void {
    this.cancelTimer = undefined;
    try {
      this.flush();
    } catch (err) {
      this.options.onError?.(err);
      if (!this.closed && this.cancelTimer === undefined) {
        this.cancelTimer = this.time.setTimer(() => this.flushSafely(), Math.max(this.flushIntervalMs, 1000), { unref: true });
      }
    }
  }

  private trimPending(): void {
    const limit = this.flushRecords * 20;
    if (this.pending.length <= limit) return;
    const lost = this.pending.splice(0, this.pending.length - limit);
    const byDevice: DropTally = new Map();
    for (const record of lost) {
      tally(byDevice, record.device, 1, record.payload.length);
      this.counter(record.device).dropped += 1;
    }
    reportDrops(byDevice, 'write-failed', this.options.onDrop);
  }

  private snapshotCounters(): Map<string, OutboxDeviceStats> {
    return new Map([...this.counters].map(([device, c]) => [device, { ...c }]));
  }

  private restoreCounters(snapshot: Map<string, OutboxDeviceStats>): void {
    for (const [device, counter] of this.counters) {
      const saved = snapshot.get(device) ?? { depth: 0, bytes: 0, dropped: counter.dropped };
      counter.depth = saved.depth;
      counter.bytes = saved.bytes;
      counter.dropped = saved.dropped;
    }
  }

  private counter(device: string): OutboxDeviceStats {
    return counterIn(this.counters, device);
  }

}
