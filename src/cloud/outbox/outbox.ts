// Write-ahead outbox: every report goes to SQLite (group-committed) before it is published, and
// leaves only through ack() after PUBACK. The `write-ahead` mode; see memory-first-outbox.ts.
// While the file takes no writes (StorageHealth), appends wait in memory (capped, fair drops), are
// published from there after what is on disk (no crash window holds then), and a commit is tried
// every storageRetryMs; acks are counted at once and deleted at the next commit.
import { admit, counterIn, diskTotals, enforceCaps, noDrops, reportCapDrops, reportDrops, restoreCounters, tally, writeRows, type DropTally } from './outbox-caps.js';
import { openKept, recountAfterReplace, type StoreKeeper } from './outbox-file.js';
import { attachCounted, dropStoreRows } from './outbox-attach.js';
import { discardQueue } from './outbox-discard.js';
import { DiskReads } from './outbox-reads.js';
import { saveDroppedAtClose, type CountsLedger } from './outbox-counts.js';
import { pendingOf, trimPendingFairly, type Pending } from './outbox-pending.js';
import { systemTime, type Time } from '../../core/time.js';
import type { OutboxDeviceStats, OutboxDropInfo, OutboxRecord, OutboxStats, ReportOutbox } from '../../core/outbox-types.js';
import type { OutboxOptions } from './outbox-options.js';

export type { OutboxDeviceStats, OutboxDropInfo, OutboxRecord, OutboxStats, ReportOutbox } from '../../core/outbox-types.js';
export type { OutboxMode, OutboxOptions } from './outbox-options.js';

export class Outbox implements ReportOutbox {
  private readonly file: StoreKeeper;
  private readonly reads: DiskReads;
  private readonly flushIntervalMs: number;
  private readonly flushRecords: number;
  private readonly retryMs: number;
  private readonly overheadBytes: number;
  private readonly counters = new Map<string, OutboxDeviceStats>();
  /** Rows acknowledged while the file took no writes: skipped by peek, deleted at the next commit. */
  private readonly ackedOnDisk = new Map<string, number>();
  private pending: Pending[] = [];
  private nextSeq: number;
  private lastDiskOldest: number | undefined;
  /** When a write stores the per-device figures (outbox_counts). */
  private readonly counts: CountsLedger;
  private cancelTimer: (() => void) | undefined;
  private readonly time: Time;
  private closed = false;
  /** Set by close(): its last write stores the figures whatever their age. */
  private closing = false;

  constructor(private readonly options: OutboxOptions) {
    this.flushIntervalMs = options.flushIntervalMs ?? 50;
    this.flushRecords = options.flushRecords ?? 500;
    this.retryMs = options.storageRetryMs ?? 1000;
    this.overheadBytes = options.recordOverheadBytes ?? 0;
    this.time = options.time ?? systemTime;
    const hooks = { now: () => this.time.now(), onStorage: options.onStorage, onMovedAside: options.onMovedAside, verifyEveryMs: this.retryMs, condemnAfterMs: options.condemnAfterMs, memoryOverheadBytes: this.overheadBytes };
    ({ file: this.file, counts: this.counts, nextSeq: this.nextSeq } = openKept(options.path, { synchronous: 'NORMAL' }, hooks, this.counters, this.ackedOnDisk, options));
    this.reads = new DiskReads(this.file, this.time, this.retryMs, this.counters, {
      wake: options.onCommit, onReads: options.onReads, drops: options, beforeRetry: () => this.checkFile(),
      onRejected: () => {
        if (this.cancelTimer === undefined) this.retryLater();
      },
    });
  }

  /** Buffer one report; committed within flushIntervalMs or flushRecords, or by flush()/close(). */
  append(device: string, payload: Buffer | string, ts: number): void {
    if (this.closed) throw new Error('outbox is closed');
    const bytes = admit(device, payload, this.options.maxBytesPerDevice, this.counters, this.options);
    if (bytes === undefined) return;
    this.pending.push({ seq: this.nextSeq, device, ts, payload: bytes });
    this.nextSeq += 1;
    if (!this.file.ok) {
      // The retry timer commits; meanwhile memory stays within its caps and is published from there.
      this.trimPending();
      this.options.onCommit?.(new Set([device]));
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
    if (this.closed) return;
    const countsDue = this.closing || this.counts.droppedChanged(this.counters);
    if (this.pending.length === 0 && deletes.length === 0 && !this.reads.hasRejected && !countsDue) {
      if (!this.file.ok) this.probe();
      return;
    }
    // While reads fail, the commit on a fresh connection: one that met EIO may write back pages it never read.
    if (this.reads.failingNow) this.file.store.markStale();
    const batch = this.pending;
    this.pending = [];
    const before = new Map([...this.counters].map(([device, c]) => [device, { ...c }]));
    let drops = noDrops();
    let touched = new Set<string>();
    let purged: number[] = [];
    let counts: ReturnType<CountsLedger['due']>;
    try {
      this.file.store.transaction(() => {
        purged = this.reads.purge(this.file.store);
        touched = writeRows(this.file.store, this.counters, deletes, batch);
        drops = enforceCaps(this.file.store, this.counters, touched, this.options);
        // With this commit's own cap drops: the dropped counters survive a restart.
        counts = this.counts.due(this.counters, this.time.now(), this.closing);
        if (counts) this.file.store.saveCounts(counts);
      });
    } catch (err) {
      // Rolled back: restore the counters and keep the batch, bounded, for the next commit.
      restoreCounters(this.counters, before);
      this.pending = batch.concat(this.pending);
      this.trimPending();
      this.file.failed(err);
      this.retryLater();
      return;
    }
    this.file.succeeded();
    if (!this.file.ok) this.retryLater();
    this.reads.purged(purged);
    this.counts.saved(counts, this.time.now());
    for (const [device, upTo] of deletes) if (this.ackedOnDisk.get(device) === upTo) this.ackedOnDisk.delete(device);
    reportCapDrops(drops, this.options);
    if (touched.size > 0) this.options.onCommit?.(touched);
  }

  /** A file deleted, replaced or found corrupt is replaced by a fresh one with every row that could be read. */
  checkFile(): void {
    if (this.closed) return;
    if (this.file.detached) return this.attachFile();
    const { replaced, movedAside } = this.file.check();
    if (!replaced) return;
    this.reads.forgetRejected();
    this.counts.reset();
    recountAfterReplace(this.file.store, this.counters, this.ackedOnDisk, this.options, movedAside);
  }

  /** Never opened at start: the file taken up with every row, the waiting appends included (outbox-attach.ts). */
  private attachFile(): void {
    const batch = this.pending;
    let purged: number[] = [];
    const attached = attachCounted(this.file, this.counters, this.ackedOnDisk, this.nextSeq, batch, this.options, (store) => (purged = this.reads.purge(store)));
    if (!attached) return;
    this.reads.purged(purged);
    this.nextSeq = attached.nextSeq;
    this.pending = this.pending.slice(batch.length);
    // The file holds none of this run's figures yet: the next commit stores them (soon when a device dropped any).
    this.counts.reset();
    if (this.counts.droppedChanged(this.counters) && this.cancelTimer === undefined) this.cancelTimer = this.time.setTimer(() => this.flush(), 0, { unref: true });
    const devices = new Set([...attached.totals.map((t) => t.device), ...batch.map((r) => r.device)]);
    if (devices.size > 0) this.options.onCommit?.(devices);
    this.options.onFileAttached?.();
  }

  /** A removed device's reports, committed and waiting, dropped and counted ('device-removed'); returns how many. */
  discard(device: string): number {
    if (this.closed) return 0;
    const waiting = this.pending.filter((p) => p.device === device);
    this.pending = this.pending.filter((p) => p.device !== device);
    const held = { records: waiting.length, bytes: waiting.reduce((sum, p) => sum + p.payload.length, 0) };
    const dropped = discardQueue(device, this.counters, this.ackedOnDisk, this.nextSeq - 1, held, this.options);
    // This commit deletes the rows and stores the counter (or the next one, while the file takes no writes).
    if (dropped > 0) this.flush();
    return dropped;
  }

  /**
   * Committed records; while the file takes no writes, then the ones waiting for it (newer by seq).
   * Nothing at all when the device's committed rows cannot be read (retried later): order holds.
   */
  peek(device: string, limit: number, afterSeq = 0): OutboxRecord[] {
    if (this.closed) return [];
    let records: OutboxRecord[] = [];
    if ((this.counters.get(device)?.depth ?? 0) > 0) {
      const read = this.reads.after(device, Math.max(afterSeq, this.ackedOnDisk.get(device) ?? 0), limit);
      if (read === undefined) return [];
      records = read;
    } else this.reads.nothingToRead(device);
    if (!this.file.ok && records.length < limit) {
      const waiting = pendingOf(this.pending, device, records.at(-1)?.seq ?? afterSeq, limit - records.length);
      records = records.concat(waiting.map(({ seq, ts, payload }) => ({ seq, ts, payload })));
    }
    this.reads.handedOut(device, records);
    return records;
  }

  /** Counts (and deletes) only what a peek handed out, up to upToSeq. */
  ack(device: string, upToSeq: number): number {
    if (this.closed) return 0;
    upToSeq = this.reads.ackable(device, upToSeq);
    // Published from memory while the file took no writes: acknowledged, they need no commit.
    const before = this.pending.length;
    this.pending = this.pending.filter((p) => p.device !== device || p.seq > upToSeq);
    const fromMemory = before - this.pending.length;
    const from = this.ackedOnDisk.get(device) ?? 0;
    if (upToSeq <= from) return fromMemory;
    // Rows already counted as gone and not yet deleted: the rest waits for the same commit.
    if (from === 0) {
      try {
        const deleted = this.file.store.transaction(() => this.file.store.deleteThrough(device, upToSeq));
        return this.uncount(device, this.reads.discount(device, 0, upToSeq, deleted)) + fromMemory;
      } catch (err) {
        this.file.failed(err);
      }
    }
    // The file takes no deletes: count the rows gone now, delete them at the next commit.
    const measured = this.reads.measureForAck(device, from, upToSeq, this.counter(device).depth);
    if (measured === undefined) return fromMemory;
    const gone = this.reads.discount(device, from, upToSeq, measured);
    this.ackedOnDisk.set(device, upToSeq);
    if (this.cancelTimer === undefined) this.retryLater();
    return this.uncount(device, gone) + fromMemory;
  }

  private uncount(device: string, gone: { records: number; bytes: number }): number {
    const counter = this.counter(device);
    counter.depth -= gone.records;
    counter.bytes -= gone.bytes;
    return gone.records;
  }

  /** Depth and bytes count what waits for a commit too (as memory-first's count its memory); onDisk what is committed. */
  stats(): OutboxStats {
    const { devices, onDisk, diskBytes, dropped } = diskTotals(this.counters);
    let pendingBytes = 0;
    for (const p of this.pending) {
      const entry = (devices[p.device] ??= { depth: 0, bytes: 0, dropped: 0 });
      entry.depth += 1;
      entry.bytes += p.payload.length + this.overheadBytes;
      pendingBytes += p.payload.length + this.overheadBytes;
    }
    return {
      devices, depth: onDisk + this.pending.length, bytes: diskBytes + pendingBytes, dropped, buffered: this.pending.length, onDisk, diskBytes,
      oldestTs: this.closed || onDisk === 0 ? this.pending[0]?.ts : this.oldestOnDisk(), storage: this.file.health.state(), reads: this.reads.state(),
    };
  }

  devicesWithBacklog(): string[] {
    const names = new Set(this.pending.map((p) => p.device));
    for (const [device, c] of this.counters) if (c.depth > 0) names.add(device);
    return [...names];
  }

  /** Commits what is buffered and closes the store; what cannot be committed is counted as dropped. Never throws. */
  close(): void {
    if (this.closed) return;
    this.closing = true;
    this.flush();
    this.closed = true;
    this.reads.close();
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.dropPending(this.pending.splice(0), 'write-failed');
    if (this.file.inMemory) reportDrops(dropStoreRows(this.counters), 'write-failed', this.options);
    // The drops of this close stored where the file still takes a small write.
    saveDroppedAtClose(this.file, this.counts, this.counters, this.time.now());
    try {
      this.file.store.close();
    } catch (err) {
      this.file.failed(err);
    }
  }

  /** Nothing to commit while failing: a small real write tells whether the file takes writes again. */
  private probe(): void {
    if (!this.file.probe()) this.retryLater();
  }

  private retryLater(): void {
    if (!this.closed) this.cancelTimer = this.time.setTimer(() => this.flush(), this.retryMs, { unref: true });
  }

  /** While the read fails, the last one read: the rows are still there (a backlog must not look replayed). */
  private oldestOnDisk(): number | undefined {
    const failures = this.reads.failures;
    const oldest = this.reads.read(() => this.file.store.oldestSampleTs());
    if (this.reads.failures > failures) return this.lastDiskOldest;
    this.lastDiskOldest = oldest;
    return oldest;
  }

  /** At most flushRecords × 20 reports and maxBytesTotal bytes wait in memory; the largest holder loses first. */
  private trimPending(): void {
    const kept = trimPendingFairly(this.pending, this.flushRecords * 20, this.options.maxBytesTotal ?? Infinity, (d) => this.counters.get(d)?.bytes ?? 0, this.overheadBytes);
    this.dropPending(kept.lost, 'total-cap');
    this.pending = kept.kept;
  }

  private dropPending(lost: readonly Pending[], reason: OutboxDropInfo['reason']): void {
    if (lost.length === 0) return;
    const byDevice: DropTally = new Map();
    for (const record of lost) {
      tally(byDevice, record.device, 1, record.payload.length);
      this.counter(record.device).dropped += 1;
    }
    reportDrops(byDevice, reason, this.options);
  }

  private counter(device: string): OutboxDeviceStats {
    return counterIn(this.counters, device);
  }
}
