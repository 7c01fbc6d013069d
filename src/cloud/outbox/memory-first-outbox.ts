// Memory-first outbox: a report lives in memory while the broker is expected to acknowledge it;
// only a report still unacknowledged at its deadline (at most `durableAfterMs` after its append)
// is written to SQLite, together with the rest of its device's memory and every other device due
// then, in one transaction. Acknowledged disk rows are deleted in the same periodic transaction.
// A spill takes a device's whole memory, so its disk rows are always older than its memory
// records: a device's order is its disk rows, then its memory records. While the file takes no
// writes (StorageHealth), reports stay in memory (capped, fair drops), are still delivered and
// acknowledged, and a write is tried every storageRetryMs until one succeeds.
import { admit, capMemory, counterIn, diskTotals, dropAllMemory, enforceCaps, noDrops, reportCapDrops, reportDrops, restoreCounters, writeRows } from './outbox-caps.js';
import { MemoryQueue, type MemoryRecord } from './outbox-memory.js';
import { openKept, recountAfterReplace, type StoreKeeper } from './outbox-file.js';
import { attachCounted, dropStoreRows } from './outbox-attach.js';
import { discardQueue } from './outbox-discard.js';
import { DiskReads } from './outbox-reads.js';
import { saveDroppedAtClose, type CountsLedger } from './outbox-counts.js';
import type { OutboxDeviceStats, OutboxRecord, OutboxStats, ReportOutbox } from '../../core/outbox-types.js';
import type { OutboxOptions } from './outbox-options.js';
import { systemTime, type Time } from '../../core/time.js';

export const DEFAULT_DURABLE_AFTER_MS = 1000;

export class MemoryFirstOutbox implements ReportOutbox {
  private readonly file: StoreKeeper;
  private readonly memory: MemoryQueue;
  private readonly reads: DiskReads;
  private readonly durableAfterMs: number;
  private readonly retryMs: number;
  private readonly time: Time;
  /** Rows on disk and not yet acknowledged, per device; `dropped` counts memory drops too. */
  private readonly disk = new Map<string, OutboxDeviceStats>();
  /** Disk rows acknowledged up to this seq, deleted at the next write. */
  private readonly ackedOnDisk = new Map<string, number>();
  private nextSeq: number;
  private lastDiskOldest: number | undefined;
  /** When a write stores the per-device figures (outbox_counts). */
  private readonly counts: CountsLedger;
  private cancelTimer: (() => void) | undefined;
  private timerAt = Infinity;
  private readonly notifyPending = new Set<string>();
  private closed = false;
  /** Set by close(): its last write stores the figures whatever their age. */
  private closing = false;

  constructor(private readonly options: OutboxOptions) {
    this.durableAfterMs = Math.max(0, options.durableAfterMs ?? DEFAULT_DURABLE_AFTER_MS);
    this.time = options.time ?? systemTime;
    this.retryMs = options.storageRetryMs ?? 1000;
    this.memory = new MemoryQueue(this.durableAfterMs, options.recordOverheadBytes ?? 0);
    // FULL: commits are rare here (at most one per durableAfterMs), so each may be fsynced and the
    // crash window then holds for power cuts too, not only for a killed process.
    const hooks = { now: () => this.time.now(), onStorage: options.onStorage, onMovedAside: options.onMovedAside, verifyEveryMs: this.retryMs, condemnAfterMs: options.condemnAfterMs, memoryOverheadBytes: options.recordOverheadBytes };
    ({ file: this.file, counts: this.counts, nextSeq: this.nextSeq } = openKept(options.path, { synchronous: 'FULL' }, hooks, this.disk, this.ackedOnDisk, options));
    this.reads = new DiskReads(this.file, this.time, this.retryMs, this.disk, {
      wake: options.onCommit, onReads: options.onReads, drops: options, beforeRetry: () => this.checkFile(),
      onRejected: () => this.schedule(this.time.now(), this.time.now() + this.durableAfterMs),
    });
  }

  append(device: string, payload: Buffer | string, ts: number): void {
    if (this.closed) throw new Error('outbox is closed');
    const bytes = admit(device, payload, this.options.maxBytesPerDevice, this.disk, this.options);
    if (bytes === undefined) return;
    const now = this.time.now();
    this.memory.push(device, this.nextSeq, ts, bytes, now);
    this.nextSeq += 1;
    this.capMemory(device);
    this.schedule(now);
    this.wake(device);
  }

  /** A device's disk rows, then its memory; nothing at all when its disk rows cannot be read (retried later). */
  peek(device: string, limit: number, afterSeq = 0): OutboxRecord[] {
    if (this.closed) return [];
    let fromDisk: OutboxRecord[] = [];
    if ((this.disk.get(device)?.depth ?? 0) > 0) {
      const read = this.reads.after(device, Math.max(afterSeq, this.ackedOnDisk.get(device) ?? 0), limit);
      // Newer records in memory must wait: acknowledging them would count the unread rows as sent.
      if (read === undefined) return [];
      fromDisk = read;
    } else this.reads.nothingToRead(device);
    const last = fromDisk.at(-1)?.seq ?? afterSeq;
    const records = fromDisk.length >= limit ? fromDisk : fromDisk.concat(this.memory.after(device, last, limit - fromDisk.length));
    this.reads.handedOut(device, records);
    return records;
  }

  /** Counts (and deletes) only what a peek handed out, up to upToSeq. */
  ack(device: string, upToSeq: number): number {
    if (this.closed) return 0;
    upToSeq = this.reads.ackable(device, upToSeq);
    let acked = this.memory.ackThrough(device, upToSeq).records;
    const disk = this.disk.get(device);
    if (disk && disk.depth > 0) {
      const from = this.ackedOnDisk.get(device) ?? 0;
      // A failed read leaves the rows counted: deleted after a later ack, never skipped.
      const measured = upToSeq > from ? this.reads.measureForAck(device, from, upToSeq, disk.depth) : undefined;
      const gone = measured && this.reads.discount(device, from, upToSeq, measured);
      if (gone) {
        // Only counted now; the DELETE waits for the next write (at most durableAfterMs): a crash
        // before it resends these few (counted as duplicates downstream), never loses any.
        disk.depth -= gone.records;
        disk.bytes -= gone.bytes;
        acked += gone.records;
        this.ackedOnDisk.set(device, upToSeq);
        this.schedule(this.time.now(), this.time.now() + this.durableAfterMs);
      }
    }
    return acked;
  }

  stats(): OutboxStats {
    const { devices, onDisk, diskBytes, dropped } = diskTotals(this.disk);
    for (const device of this.memory.devices()) {
      const entry = (devices[device] ??= { depth: 0, bytes: 0, dropped: 0 });
      entry.depth += this.memory.deviceCount(device);
      entry.bytes += this.memory.deviceBytes(device);
    }
    const diskOldest = onDisk > 0 && !this.closed ? this.oldestOnDisk() : undefined;
    return {
      devices, depth: onDisk + this.memory.size, bytes: diskBytes + this.memory.bytes, dropped,
      buffered: this.memory.size, onDisk, diskBytes, oldestTs: diskOldest ?? this.memory.oldestTs(), storage: this.file.health.state(), reads: this.reads.state(),
    };
  }

  devicesWithBacklog(): string[] {
    const names = new Set(this.memory.devices());
    for (const [device, d] of this.disk) if (d.depth > 0) names.add(device);
    return [...names];
  }

  /** A file deleted, replaced or found corrupt is replaced by a fresh one with every row that could be read. */
  checkFile(): void {
    if (this.closed) return;
    if (this.file.detached) return this.attachFile();
    const { replaced, movedAside } = this.file.check();
    if (replaced) {
      this.reads.forgetRejected();
      this.counts.reset();
    }
    if (replaced) recountAfterReplace(this.file.store, this.disk, this.ackedOnDisk, this.options, movedAside);
  }

  /** Never opened at start: the file taken up with every row, memory's included (outbox-attach.ts). */
  private attachFile(): void {
    const batch = this.memory.all();
    let purged: number[] = [];
    const attached = attachCounted(this.file, this.disk, this.ackedOnDisk, this.nextSeq, batch, this.options, (store) => (purged = this.reads.purge(store)));
    if (!attached) return;
    this.reads.purged(purged);
    this.nextSeq = attached.nextSeq;
    for (const [device, seq] of new Map(batch.map((r) => [r.device, r.seq]))) this.memory.ackThrough(device, seq);
    for (const { device } of attached.totals) this.wake(device);
    // The file holds none of this run's figures yet: the next write stores them (at once when a device dropped any).
    this.counts.reset();
    if (this.counts.droppedChanged(this.disk)) this.schedule(this.time.now(), this.time.now());
    this.options.onFileAttached?.();
  }

  /** A removed device's reports, on disk and in memory, dropped and counted ('device-removed'); returns how many. */
  discard(device: string): number {
    if (this.closed) return 0;
    const dropped = discardQueue(device, this.disk, this.ackedOnDisk, this.nextSeq - 1, this.memory.ackThrough(device, this.nextSeq - 1), this.options);
    // The next write deletes the rows and stores the counter.
    if (dropped > 0) this.schedule(this.time.now(), this.time.now());
    return dropped;
  }

  /** Writes all of memory and the pending deletes now, in one transaction; a failure is kept in storage state. */
  flush(): void {
    if (this.closed) return;
    this.clearTimer();
    this.checkFile();
    this.afterWrite(this.write(this.memory.all()));
  }

  /** False when the write failed (counters restored, memory kept, health told) or waits for reads. */
  private write(batch: readonly MemoryRecord[]): boolean {
    // While reads fail, nothing is written (close aside): a transaction reads pages too, and one
    // that met EIO may write back pages it never read, damaging the file for good (measured).
    // Memory holds the reports meanwhile, within the caps; retried every retryMs.
    if (this.reads.failingNow && !this.closing) return false;
    const deletes = [...this.ackedOnDisk];
    const countsDue = this.closing || this.counts.droppedChanged(this.disk);
    if (batch.length === 0 && deletes.length === 0 && !this.reads.hasRejected && !countsDue) return this.file.ok || this.file.probe();
    let drops = noDrops();
    let purged: number[] = [];
    let counts: ReturnType<CountsLedger['due']>;
    const before = new Map([...this.disk].map(([device, c]) => [device, { ...c }]));
    try {
      this.file.store.transaction(() => {
        purged = this.reads.purge(this.file.store);
        const touched = writeRows(this.file.store, this.disk, deletes, batch);
        // What stays in memory after this write still counts against the total cap.
        drops = enforceCaps(this.file.store, this.disk, touched, this.options, (device) => (touched.has(device) ? 0 : this.memory.deviceBytes(device)));
        // With this write's own cap drops: the dropped counters survive a restart.
        counts = this.counts.due(this.disk, this.time.now(), this.closing);
        if (counts) this.file.store.saveCounts(counts);
      });
    } catch (err) {
      restoreCounters(this.disk, before);
      this.file.failed(err);
      return false;
    }
    this.file.succeeded();
    this.reads.purged(purged);
    this.counts.saved(counts, this.time.now());
    for (const [device, upTo] of deletes) if (this.ackedOnDisk.get(device) === upTo) this.ackedOnDisk.delete(device);
    const lastOf = new Map(batch.map((r) => [r.device, r.seq]));
    for (const [device, seq] of lastOf) this.memory.ackThrough(device, seq);
    reportCapDrops(drops, this.options);
    return true;
  }

  /**
   * Spills memory to disk and closes the store. A spill that fails loses what memory held: it is
   * counted as dropped ('write-failed'), and the store is closed all the same. Never throws.
   */
  close(): void {
    if (this.closed) return;
    this.checkFile();
    this.closing = true;
    if (!this.write(this.memory.all())) this.dropMemory();
    else if (this.file.inMemory) reportDrops(dropStoreRows(this.disk), 'write-failed', this.options);
    // The drops of this close stored where the file still takes a small write.
    saveDroppedAtClose(this.file, this.counts, this.disk, this.time.now());
    this.closed = true;
    this.clearTimer();
    this.reads.close();
    try {
      this.file.store.close();
    } catch (err) {
      this.file.failed(err);
    }
  }

  /** The next timer: the earliest deadline after a good write, a retry after a failed one. */
  private afterWrite(ok: boolean): void {
    const now = this.time.now();
    if (ok) this.schedule(now);
    else this.schedule(now, now + this.retryMs);
  }

  private dropMemory(): void {
    reportDrops(dropAllMemory(this.memory, this.disk), 'write-failed', this.options);
  }

  /** While the read fails, the last one read: the rows are still there (a backlog must not look replayed). */
  private oldestOnDisk(): number | undefined {
    const failures = this.reads.failures;
    const oldest = this.reads.oldestOf(this.disk, this.ackedOnDisk);
    if (this.reads.failures > failures) return this.lastDiskOldest;
    this.lastDiskOldest = oldest;
    return oldest;
  }

  /** Memory alone over a cap: drop its oldest now (disk rows are dropped at the next write). */
  private capMemory(device: string): void {
    const drops = capMemory(this.memory, device, this.options, (d) => this.disk.get(d)?.bytes ?? 0);
    for (const tallied of [drops.device, drops.total]) for (const [d, e] of tallied) counterIn(this.disk, d).dropped += e.records;
    reportCapDrops(drops, this.options);
  }

  /** Arms the write timer for the earliest memory deadline (or `at`); while failing, only the retry. */
  private schedule(now: number, at = this.memory.nextDeadline() ?? Infinity): void {
    if (this.closed || at >= this.timerAt) return;
    // A failing disk is retried every retryMs, not at each append's (past) deadline: that was a
    // tight loop of doomed transactions starving delivery.
    if (!this.file.ok && this.cancelTimer !== undefined) return;
    this.clearTimer();
    this.timerAt = at;
    this.cancelTimer = this.time.setTimer(() => this.onTimer(), Math.max(0, at - now), { unref: true });
  }

  private onTimer(): void {
    this.cancelTimer = undefined;
    this.timerAt = Infinity;
    if (!this.file.ok) this.checkFile();
    this.afterWrite(this.write(this.memory.due(this.time.now())));
  }

  private clearTimer(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.timerAt = Infinity;
  }

  /** Forwarders learn of new records once per turn, not once per append. */
  private wake(device: string): void {
    if (this.notifyPending.size === 0) {
      queueMicrotask(() => {
        const devices = new Set(this.notifyPending);
        this.notifyPending.clear();
        if (!this.closed) this.options.onCommit?.(devices);
      });
    }
    this.notifyPending.add(device);
  }
}
