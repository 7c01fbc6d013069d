// Write-ahead outbox: every report goes to SQLite (group-committed) before it is published, and
// leaves only through ack() after PUBACK. The `write-ahead` mode; see memory-first-outbox.ts.
// While the file takes no writes (StorageHealth), appends wait in memory (capped, fair drops) and
// a commit is tried every storageRetryMs; acks are counted at once and deleted at the next commit.
import { admit, counterIn, enforceCaps, noDrops, reportCapDrops, reportDrops, type DropTally } from './outbox-caps.js';
import { recountAfterLoss, StoreKeeper } from './outbox-file.js';
import { trimPendingFairly, type Pending } from './outbox-pending.js';
import { systemTime, type Time } from '../core/time.js';
import type { OutboxDeviceStats, OutboxRecord, OutboxStats, ReportOutbox } from '../core/outbox-types.js';
import type { OutboxOptions } from './outbox-options.js';

export type { OutboxDeviceStats, OutboxDropInfo, OutboxRecord, OutboxStats, ReportOutbox } from '../core/outbox-types.js';
export type { OutboxMode, OutboxOptions } from './outbox-options.js';

export class Outbox implements ReportOutbox {
  private readonly file: StoreKeeper;
  private readonly flushIntervalMs: number;
  private readonly flushRecords: number;
  private readonly retryMs: number;
  private readonly counters = new Map<string, OutboxDeviceStats>();
  /** Rows acknowledged while the file took no writes: skipped by peek, deleted at the next commit. */
  private readonly ackedOnDisk = new Map<string, number>();
  private pending: Pending[] = [];
  private cancelTimer: (() => void) | undefined;
  private readonly time: Time;
  private closed = false;

  constructor(private readonly options: OutboxOptions) {
    this.flushIntervalMs = options.flushIntervalMs ?? 50;
    this.flushRecords = options.flushRecords ?? 500;
    this.retryMs = options.storageRetryMs ?? 1000;
    this.time = options.time ?? systemTime;
    this.file = new StoreKeeper(options.path, { synchronous: 'NORMAL' }, { now: () => this.time.now(), onStorage: options.onStorage, onMovedAside: options.onMovedAside });
    for (const row of this.file.opened.totals) this.counters.set(row.device, { depth: row.depth, bytes: row.bytes, dropped: 0 });
  }

  /** Buffer one report; committed within flushIntervalMs or flushRecords, or by flush()/close(). */
  append(device: string, payload: Buffer | string, ts: number): void {
    if (this.closed) throw new Error('outbox is closed');
    const bytes = admit(device, payload, this.options.maxBytesPerDevice, this.counters, this.options.onDrop);
    if (bytes === undefined) return;
    this.pending.push({ device, ts, payload: bytes });
    if (!this.file.ok) {
      // The retry timer commits; meanwhile memory stays within its caps.
      this.trimPending();
    } else if (this.pending.length >= this.flushRecords) {
      this.flush();
    } else if (this.cancelTimer === undefined) {
      this.cancelTimer = this.time.setTimer(() => this.flush(), this.flushIntervalMs, { unref: true });
    }
  }

  /** Commit every buffered append and deferred delete in one transaction, then enforce the byte caps. Never throws. */
  flush(): void {
    if (this.cancelTimer !== undefined) {
      this.cancelTimer();
      this.cancelTimer = undefined;
    }
    this.checkFile();
    const deletes = [...this.ackedOnDisk];
    if ((this.pending.length === 0 && deletes.length === 0) || this.closed) return;
    const batch = this.pending;
    this.pending = [];
    const touched = new Set<string>();
    const before = new Map([...this.counters].map(([device, c]) => [device, { ...c }]));
    let drops = noDrops();
    try {
      this.file.store.transaction(() => {
        for (const [device, upTo] of deletes) this.file.store.deleteThrough(device, upTo);
        for (const record of batch) {
          this.file.store.insert(record.device, record.ts, record.payload);
          const counter = this.counter(record.device);
          counter.depth += 1;
          counter.bytes += record.payload.length;
          touched.add(record.device);
        }
        drops = enforceCaps(this.file.store, this.counters, touched, this.options);
      });
    } catch (err) {
      // Rolled back: restore the counters and keep the batch, bounded, for the next commit.
      for (const [device, saved] of before) Object.assign(this.counter(device), saved);
      for (const device of touched) if (!before.has(device)) this.counters.delete(device);
      this.pending = batch.concat(this.pending);
      this.trimPending();
      this.file.failed(err);
      if (!this.closed) this.cancelTimer = this.time.setTimer(() => this.flush(), this.retryMs, { unref: true });
      return;
    }
    this.file.succeeded();
    for (const [device, upTo] of deletes) if (this.ackedOnDisk.get(device) === upTo) this.ackedOnDisk.delete(device);
    reportCapDrops(drops, this.options.onDrop);
    if (touched.size > 0) this.options.onCommit?.(touched);
  }

  /** A file deleted, replaced or found corrupt is replaced by a fresh one with every row that could be read. */
  checkFile(): void {
    if (this.closed) return;
    const { replaced, complete } = this.file.check();
    if (replaced && !complete) reportDrops(recountAfterLoss(this.file.store, this.counters, this.ackedOnDisk), 'file-lost', this.options.onDrop);
  }

  peek(device: string, limit: number, afterSeq = 0): OutboxRecord[] {
    if (this.closed) return [];
    try {
      return this.file.store.after(device, Math.max(afterSeq, this.ackedOnDisk.get(device) ?? 0), limit);
    } catch (err) {
      this.file.failed(err);
      return [];
    }
  }

  ack(device: string, upToSeq: number): number {
    if (this.closed) return 0;
    const from = this.ackedOnDisk.get(device) ?? 0;
    if (upToSeq <= from) return 0;
    let gone: { records: number; bytes: number };
    try {
      gone = this.file.store.transaction(() => this.file.store.deleteThrough(device, upToSeq));
      this.ackedOnDisk.delete(device);
    } catch (err) {
      // The file takes no deletes: count the rows gone now, delete them at the next commit.
      this.file.failed(err);
      try {
        gone = this.file.store.measure(device, from, upToSeq);
      } catch {
        return 0;
      }
      this.ackedOnDisk.set(device, upToSeq);
      if (this.cancelTimer === undefined && !this.closed) this.cancelTimer = this.time.setTimer(() => this.flush(), this.retryMs, { unref: true });
    }
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
    return {
      devices, depth, bytes, dropped, buffered: this.pending.length, onDisk: depth, diskBytes: bytes,
      oldestTs: this.closed || depth === 0 ? this.pending[0]?.ts : this.oldestOnDisk(), storage: this.file.health.state(),
    };
  }

  devicesWithBacklog(): string[] {
    return [...this.counters].filter(([, c]) => c.depth > 0).map(([device]) => device);
  }

  /** Commits what is buffered and closes the store; what cannot be committed is counted as dropped. Never throws. */
  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.dropPending(this.pending.splice(0));
    try {
      this.file.store.close();
    } catch (err) {
      this.file.failed(err);
    }
  }

  private oldestOnDisk(): number | undefined {
    try {
      return this.file.store.oldestSampleTs();
    } catch (err) {
      this.file.failed(err);
      return undefined;
    }
  }

  /** At most flushRecords × 20 reports and maxBytesTotal bytes wait in memory; the largest holder loses first. */
  private trimPending(): void {
    const kept = trimPendingFairly(this.pending, this.flushRecords * 20, this.options.maxBytesTotal ?? Infinity, (d) => this.counters.get(d)?.bytes ?? 0);
    this.dropPending(kept.lost);
    this.pending = kept.kept;
  }

  private dropPending(lost: readonly Pending[]): void {
    if (lost.length === 0) return;
    const byDevice: DropTally = new Map();
    for (const record of lost) {
      const entry = byDevice.get(record.device) ?? { records: 0, bytes: 0 };
      entry.records += 1;
      entry.bytes += record.payload.length;
      byDevice.set(record.device, entry);
      this.counter(record.device).dropped += 1;
    }
    reportDrops(byDevice, 'write-failed', this.options.onDrop);
  }

  private counter(device: string): OutboxDeviceStats {
    return counterIn(this.counters, device);
  }
}
