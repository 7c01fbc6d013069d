// Durable per-device FIFO of reports in SQLite (the only importer of libsql).
// Appends are group-committed to spare SD cards; records leave only through ack() after PUBACK.
import Database from 'libsql';
import type { SqliteDatabase, Statement } from '../types/sqlite.js';
import type { OutboxDeviceStats, OutboxOptions, OutboxRecord, OutboxStats } from './outbox-types.js';

export type { OutboxDeviceStats, OutboxDropInfo, OutboxOptions, OutboxRecord, OutboxStats } from './outbox-types.js';

/** A row as libsql returns it: BLOBs arrive as ArrayBuffer. */
type StoredRecord = Omit<OutboxRecord, 'payload'> & { payload: ArrayBuffer };

interface Pending {
  device: string;
  ts: number;
  payload: Buffer;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  device TEXT NOT NULL,
  ts INTEGER NOT NULL,
  payload BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS outbox_device_seq ON outbox (device, seq);
`;

export class Outbox {
  private readonly db: SqliteDatabase;
  private readonly options: Required<Omit<OutboxOptions, 'onDrop' | 'onCommit' | 'onError' | 'maxBytesTotal' | 'maxBytesPerDevice'>> & OutboxOptions;
  private readonly counters = new Map<string, OutboxDeviceStats>();
  private pending: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly insert: Statement<[string, number, Buffer]>;
  private readonly selectAfter: Statement<[string, number, number], StoredRecord>;
  private readonly sumUpTo: Statement<[string, number], { n: number; bytes: number | null }>;
  private readonly deleteUpTo: Statement<[string, number]>;
  private readonly oldestOfDevice: Statement<[string, number], { seq: number; size: number }>;
  private readonly oldestOverall: Statement<[number], { seq: number; device: string; size: number }>;
  private readonly deleteSeq: Statement<[number]>;

  constructor(options: OutboxOptions) {
    this.options = { flushIntervalMs: 50, flushRecords: 500, ...options };
    this.db = new Database(options.path) as SqliteDatabase;
    // better-sqlite3's defaults, which libsql lacks: a 5 s wait for a lock held by another
    // connection (libsql: 0 ms) and a 16 MB page cache (libsql: 2 MB).
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('cache_size = -16000');
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(SCHEMA);
    this.insert = this.db.prepare('INSERT INTO outbox (device, ts, payload) VALUES (?, ?, ?)');
    this.selectAfter = this.db.prepare(
      'SELECT seq, ts, payload FROM outbox WHERE device = ? AND seq > ? ORDER BY seq LIMIT ?',
    );
    this.sumUpTo = this.db.prepare(
      'SELECT COUNT(*) AS n, SUM(length(payload)) AS bytes FROM outbox WHERE device = ? AND seq <= ?',
    );
    this.deleteUpTo = this.db.prepare('DELETE FROM outbox WHERE device = ? AND seq <= ?');
    this.oldestOfDevice = this.db.prepare(
      'SELECT seq, length(payload) AS size FROM outbox WHERE device = ? ORDER BY seq LIMIT ?',
    );
    this.oldestOverall = this.db.prepare(
      'SELECT seq, device, length(payload) AS size FROM outbox ORDER BY seq LIMIT ?',
    );
    this.deleteSeq = this.db.prepare('DELETE FROM outbox WHERE seq = ?');
    const rows = this.db
      .prepare('SELECT device, COUNT(*) AS depth, SUM(length(payload)) AS bytes FROM outbox GROUP BY device')
      .all() as { device: string; depth: number; bytes: number }[];
    for (const row of rows) this.counters.set(row.device, { depth: row.depth, bytes: row.bytes, dropped: 0 });
  }

  /** Buffer one report; committed within flushIntervalMs or flushRecords, or by flush()/close(). */
  append(device: string, payload: Buffer | string, ts: number): void {
    if (this.closed) throw new Error('outbox is closed');
    const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload;
    const cap = this.options.maxBytesPerDevice;
    if (cap !== undefined && bytes.length > cap) {
      this.counter(device).dropped += 1;
      this.options.onDrop?.({ device, records: 1, bytes: bytes.length, reason: 'record-too-large' });
      return;
    }
    this.pending.push({ device, ts, payload: bytes });
    if (this.pending.length >= this.options.flushRecords) {
      this.flush();
    } else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flushSafely(), this.options.flushIntervalMs);
      this.timer.unref();
    }
  }

  /** Commit every buffered append in one transaction, then enforce the byte caps. */
  flush(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.pending.length === 0 || this.closed) return;
    const batch = this.pending;
    this.pending = [];
    const touched = new Set<string>();
    const before = this.snapshotCounters();
    try {
      this.db.transaction(() => {
        for (const record of batch) {
          this.insert.run(record.device, record.ts, record.payload);
          const counter = this.counter(record.device);
          counter.depth += 1;
          counter.bytes += record.payload.length;
          touched.add(record.device);
        }
        this.enforceCaps(touched);
      })();
    } catch (err) {
      // Rolled back: restore the counters and keep the batch, bounded, for the next commit.
      this.restoreCounters(before);
      this.pending = batch.concat(this.pending);
      this.trimPending();
      throw err;
    }
    this.options.onCommit?.(touched);
  }

  /** Up to `limit` committed records of a device, oldest first, with seq > afterSeq. */
  peek(device: string, limit: number, afterSeq = 0): OutboxRecord[] {
    if (this.closed) return [];
    return this.selectAfter
      .all(device, afterSeq, limit)
      .map((row) => ({ seq: row.seq, ts: row.ts, payload: Buffer.from(row.payload) }));
  }

  /** Remove a device's records up to and including seq (after their PUBACK). */
  ack(device: string, upToSeq: number): number {
    if (this.closed) return 0;
    return this.db.transaction(() => {
      const sum = this.sumUpTo.get(device, upToSeq);
      if (!sum || sum.n === 0) return 0;
      this.deleteUpTo.run(device, upToSeq);
      const counter = this.counter(device);
      counter.depth -= sum.n;
      counter.bytes -= sum.bytes ?? 0;
      return sum.n;
    })();
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
    return { devices, depth, bytes, dropped, buffered: this.pending.length };
  }

  /** Devices with committed records waiting (for forwarders at start). */
  devicesWithBacklog(): string[] {
    return [...this.counters].filter(([, c]) => c.depth > 0).map(([device]) => device);
  }

  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.db.close();
  }

  private flushSafely(): void {
    this.timer = undefined;
    try {
      this.flush();
    } catch (err) {
      this.options.onError?.(err);
      if (!this.closed && this.timer === undefined) {
        this.timer = setTimeout(() => this.flushSafely(), Math.max(this.options.flushIntervalMs, 1000));
        this.timer.unref();
      }
    }
  }

  private trimPending(): void {
    const limit = this.options.flushRecords * 20;
    if (this.pending.length <= limit) return;
    const lost = this.pending.splice(0, this.pending.length - limit);
    const byDevice = new Map<string, { records: number; bytes: number }>();
    for (const record of lost) {
      const entry = byDevice.get(record.device) ?? { records: 0, bytes: 0 };
      entry.records += 1;
      entry.bytes += record.payload.length;
      byDevice.set(record.device, entry);
      this.counter(record.device).dropped += 1;
    }
    for (const [device, entry] of byDevice) this.options.onDrop?.({ device, ...entry, reason: 'write-failed' });
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
    let counter = this.counters.get(device);
    if (!counter) {
      counter = { depth: 0, bytes: 0, dropped: 0 };
      this.counters.set(device, counter);
    }
    return counter;
  }

  private enforceCaps(touched: ReadonlySet<string>): void {
    const perDevice = this.options.maxBytesPerDevice;
    if (perDevice !== undefined) {
      for (const device of touched) this.dropOldestOfDevice(device, perDevice);
    }
    const total = this.options.maxBytesTotal;
    if (total !== undefined) this.dropOldestOverall(total);
  }

  private dropOldestOfDevice(device: string, cap: number): void {
    const counter = this.counter(device);
    let records = 0;
    let bytes = 0;
    while (counter.bytes > cap) {
      const oldest = this.oldestOfDevice.all(device, 256);
      if (oldest.length === 0) break;
      for (const row of oldest) {
        if (counter.bytes <= cap) break;
        this.deleteSeq.run(row.seq);
        counter.bytes -= row.size;
        counter.depth -= 1;
        counter.dropped += 1;
        records += 1;
        bytes += row.size;
      }
    }
    if (records > 0) this.options.onDrop?.({ device, records, bytes, reason: 'device-cap' });
  }

  private dropOldestOverall(cap: number): void {
    let totalBytes = 0;
    for (const counter of this.counters.values()) totalBytes += counter.bytes;
    const dropped = new Map<string, { records: number; bytes: number }>();
    while (totalBytes > cap) {
      const oldest = this.oldestOverall.all(256);
      if (oldest.length === 0) break;
      for (const row of oldest) {
        if (totalBytes <= cap) break;
        this.deleteSeq.run(row.seq);
        const counter = this.counter(row.device);
        counter.bytes -= row.size;
        counter.depth -= 1;
        counter.dropped += 1;
        totalBytes -= row.size;
        const entry = dropped.get(row.device) ?? { records: 0, bytes: 0 };
        entry.records += 1;
        entry.bytes += row.size;
        dropped.set(row.device, entry);
      }
    }
    for (const [device, entry] of dropped) this.options.onDrop?.({ device, ...entry, reason: 'total-cap' });
  }
}
