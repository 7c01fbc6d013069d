// Disk reads of both outbox modes. A read that fails is never skipped over: the device is served
// nothing newer (its order is its disk rows first), the read is retried with backoff (the device's
// forwarder is woken to peek again), and the failing state is reported once each way. Disk rows
// are counted as acknowledged only up to the highest seq a peek actually returned. A row whose
// checksum does not match is never handed out: it is counted as dropped ('checksum'), skipped,
// and deleted in the outbox's next write.
import type { DropListeners, OutboxDeviceStats, OutboxReadState, OutboxRecord } from '../../core/outbox-types.js';
import { reportDrops } from './outbox-caps.js';
import type { Time } from '../../core/time.js';
import { storageCause } from './outbox-storage.js';
import type { StoreKeeper } from './outbox-file.js';
import { intact, type CheckedRecord, type OutboxStore } from './outbox-store.js';

/** The longest wait between two read attempts, however long the episode lasts. */
export const MAX_READ_RETRY_MS = 30_000;

export interface ReadHooks {
  /** Devices whose peek failed, to be woken when a read is worth trying again. */
  wake?: (devices: ReadonlySet<string>) => void;
  /** Before each retry: the outbox replaces a file found corrupt (and recounts) before reading again. */
  beforeRetry?: () => void;
  /** Reads started or stopped failing (once per transition). */
  onReads?: (state: OutboxReadState) => void;
  drops?: DropListeners;
  /** Rows failed their checksum: the outbox should write (delete them) soon. */
  onRejected?: () => void;
}

/** The reads that are not one device's (the oldest sample time for status, counts). */
const OTHER_READS = '\u0000other';
/** Suffix of the source of a device's ack counts. */
const ACK_READS = '\u0000ack';

/**
 * What SQLite answers after a read error may not be an error: a connection that met EIO can go on
 * serving rows from a page it never read (measured under a FUSE layer: seq 101..143, then 7).
 * Rows out of seq order are such an answer: a failed read, so the connection is replaced.
 */
export class GarbledReadError extends Error {
  readonly code = 'SQLITE_CORRUPT_GARBLED';
}

function checkOrder(rows: readonly { seq: number }[], afterSeq: number): void {
  let last = afterSeq;
  for (const row of rows) {
    if (!(row.seq > last)) throw new GarbledReadError(`rows out of order: seq ${row.seq} after ${last}`);
    last = row.seq;
  }
}

export class DiskReads {
  private failing: { cause: string; since: number } | undefined;
  /**
   * What failed and has not read well since: a device's rows, or OTHER_READS. Reads are back only
   * when every one has, so a device whose rows lie outside the damage does not end the episode
   * (the log said "failing" and "back" many times a second).
   */
  private readonly failingSources = new Map<string, number>();
  private failedReads = 0;
  private delayMs: number;
  private cancelTimer: (() => void) | undefined;
  private readonly waiting = new Set<string>();
  /** Per device, the highest seq a peek returned (disk rows beyond it were never read). */
  private readonly served = new Map<string, number>();
  /** Rows that failed their checksum (already counted), by seq: skipped, deleted at the next write. */
  private readonly rejected = new Map<number, { device: string; bytes: number }>();
  private closed = false;

  /** `counters`: the outbox's disk rows per device, counted down (and dropped up) for each rejected row. */
  constructor(private readonly file: StoreKeeper, private readonly time: Time, private readonly baseDelayMs: number, private readonly counters: Map<string, OutboxDeviceStats>, private readonly hooks: ReadHooks) {
    this.delayMs = baseDelayMs;
    file.holdStorageBackWhile(() => this.failingNow);
  }

  /**
   * Up to `limit` intact disk rows of a device after afterSeq; undefined when the read failed or
   * waits for its retry (serve nothing newer). A device woken by new reports meanwhile does not
   * read before its retry: that was a read per append, and "back" and "failing" many times a second.
   */
  after(device: string, afterSeq: number, limit: number): OutboxRecord[] | undefined {
    if (this.waiting.has(device)) return undefined;
    const out: OutboxRecord[] = [];
    let from = afterSeq;
    // While reads fail, each read on a fresh connection: one that met EIO may answer from pages it never read.
    if (this.failingSources.size > 0) this.file.store.markStale();
    let reachedEnd = false;
    try {
      while (out.length < limit) {
        const want = limit - out.length;
        const rows = this.file.store.after(device, from, want);
        checkOrder(rows, from);
        for (const row of rows) {
          if (this.rejected.has(row.seq)) continue;
          if (intact(row)) out.push({ seq: row.seq, ts: row.ts, payload: row.payload });
          else this.reject(device, row);
        }
        // Rows skipped: read on, or a short answer would look like the end of the backlog.
        if (rows.length < want) {
          reachedEnd = true;
          break;
        }
        from = rows[rows.length - 1].seq;
      }
    } catch (err) {
      this.failed(err, device, device, afterSeq);
      return undefined;
    }
    // Back only when this read covered where the failed one started (or read to the end).
    const failedFrom = this.failingSources.get(device);
    if (failedFrom === undefined || afterSeq >= failedFrom || reachedEnd) this.succeeded(device);
    return out;
  }

  /**
   * What an ack of (from, upTo] may count down: `gone` less the rejected rows in that range (counted
   * when rejected). They are forgotten here: the ack's delete takes them with it.
   */
  discount(device: string, from: number, upTo: number, gone: { records: number; bytes: number }): { records: number; bytes: number } {
    const left = { ...gone };
    for (const [seq, row] of this.rejected) {
      if (row.device !== device || seq <= from || seq > upTo) continue;
      left.records -= 1;
      left.bytes -= row.bytes;
      this.rejected.delete(seq);
    }
    return { records: Math.max(0, left.records), bytes: Math.max(0, left.bytes) };
  }

  /**
   * Count and bytes of a device's disk rows in (from, upTo], read for an ack: more than the device
   * holds (its unacked rows and rejected ones in range) is a garbled answer, a failed read, and
   * never counted down.
   */
  measureForAck(device: string, from: number, upTo: number, depth: number): { records: number; bytes: number } | undefined {
    return this.read(() => {
      const measured = this.file.store.measure(device, from, upTo);
      let rejected = 0;
      for (const [seq, row] of this.rejected) if (row.device === device && seq > from && seq <= upTo) rejected += 1;
      if (measured.records > depth + rejected) throw new GarbledReadError(`${measured.records} rows measured, ${depth} held`);
      return measured;
    }, device);
  }

  /** True when rejected rows wait to be deleted. */
  get hasRejected(): boolean {
    return this.rejected.size > 0;
  }

  /** Deletes the rejected rows, inside the caller's write transaction. */
  purge(store: OutboxStore): number[] {
    const seqs = [...this.rejected.keys()];
    for (const seq of seqs) store.deleteOne(seq);
    return seqs;
  }

  /** After the purge's transaction committed. */
  purged(seqs: readonly number[]): void {
    for (const seq of seqs) this.rejected.delete(seq);
  }

  /** The store was replaced: rejected rows did not come along (see replaceFile); the old file's read failures end with it. */
  forgetRejected(): void {
    this.rejected.clear();
    this.failingSources.clear();
    this.succeeded(OTHER_READS);
  }

  /** A device with no disk rows left (sent, dropped, discarded): its earlier failure no longer holds the episode open. */
  nothingToRead(device: string): void {
    for (const source of [`${device}${ACK_READS}`, device]) if (this.failingSources.has(source)) this.succeeded(source);
  }

  /** Remembers what a peek handed out, so an ack never counts disk rows it did not see. */
  handedOut(device: string, records: readonly OutboxRecord[]): void {
    const last = records.at(-1)?.seq;
    if (last !== undefined && last > (this.served.get(device) ?? 0)) this.served.set(device, last);
  }

  /** The seq up to which disk rows may be counted acknowledged for an ack up to `upToSeq`. */
  ackable(device: string, upToSeq: number): number {
    return Math.min(upToSeq, this.served.get(device) ?? 0);
  }

  /** A read (count, oldest time) that failed: reported, the caller keeps its counters as they are. `device`: whose rows it reads. */
  read<T>(work: () => T, device?: string): T | undefined {
    // An ack's count is its own source: its success says nothing about the rows a peek could not read.
    const source = device === undefined ? OTHER_READS : `${device}${ACK_READS}`;
    let result: T;
    if (this.failingSources.size > 0) this.file.store.markStale();
    try {
      result = work();
    } catch (err) {
      this.failed(err, device, source);
      return undefined;
    }
    this.succeeded(source);
    return result;
  }

  /** The oldest sample time among devices' disk rows, skipping rows acknowledged but not yet deleted; undefined when a read fails. */
  oldestOf(counters: ReadonlyMap<string, OutboxDeviceStats>, ackedOnDisk: ReadonlyMap<string, number>): number | undefined {
    return this.read(() => {
      let oldest: number | undefined;
      for (const [device, d] of counters) {
        if (d.depth === 0) continue;
        const ts = this.file.store.oldestSampleTsOf(device, ackedOnDisk.get(device) ?? 0);
        if (ts !== undefined && (oldest === undefined || ts < oldest)) oldest = ts;
      }
      return oldest;
    });
  }

  /** True while a read that failed has not read well since. */
  get failingNow(): boolean {
    return this.failingSources.size > 0;
  }

  /** Reads that failed so far (a caller tells a failed read from an empty answer). */
  get failures(): number {
    return this.failedReads;
  }

  state(): OutboxReadState {
    const base = { failedReads: this.failedReads };
    return this.failing ? { ...base, state: 'failing', cause: this.failing.cause, since: this.failing.since } : { ...base, state: 'ok' };
  }

  close(): void {
    this.closed = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
  }

  private reject(device: string, row: CheckedRecord): void {
    const bytes = this.file.store.rowBytes(row.payload.length);
    this.rejected.set(row.seq, { device, bytes });
    const counter = this.counters.get(device);
    if (counter) {
      counter.depth = Math.max(0, counter.depth - 1);
      counter.bytes = Math.max(0, counter.bytes - bytes);
      counter.dropped += 1;
    }
    reportDrops(new Map([[device, { records: 1, bytes: row.payload.length }]]), 'checksum', this.hooks.drops ?? {}, row.seq);
    this.hooks.onRejected?.();
  }

  private failed(err: unknown, device?: string, source = device ?? OTHER_READS, from = 0): void {
    this.failedReads += 1;
    this.failingSources.set(source, Math.min(from, this.failingSources.get(source) ?? from));
    // Told apart later (StoreKeeper.check): an I/O error that SQLite reports as corruption.
    this.file.suspect(err);
    if (!this.failing) {
      this.failing = { cause: storageCause(err), since: this.time.now() };
      this.hooks.onReads?.(this.state());
    }
    if (device !== undefined) this.waiting.add(device);
    this.arm();
  }

  private succeeded(source: string): void {
    this.failingSources.delete(source);
    if (this.failingSources.size > 0) return;
    this.delayMs = this.baseDelayMs;
    if (!this.failing) return;
    this.failing = undefined;
    this.hooks.onReads?.(this.state());
  }

  /** One timer for every waiting device; each failed attempt doubles the wait up to MAX_READ_RETRY_MS. */
  private arm(): void {
    if (this.closed || this.cancelTimer !== undefined) return;
    const delay = this.delayMs;
    this.delayMs = Math.min(MAX_READ_RETRY_MS, this.delayMs * 2);
    this.cancelTimer = this.time.setTimer(() => {
      this.cancelTimer = undefined;
      if (this.closed) return;
      this.hooks.beforeRetry?.();
      const devices = new Set(this.waiting);
      this.waiting.clear();
      if (devices.size > 0) this.hooks.wake?.(devices);
    }, delay, { unref: true });
  }
}
