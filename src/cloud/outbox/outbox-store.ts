// The outbox's SQLite file: the only module that imports the SQLite binding (libsql). Both outbox modes
// keep their rows here; everything else about them (order, bytes, deadlines) lives in memory.
import Database from 'libsql';
import { ensurePrivateFile } from './private-file.js';
import { ensureCounts, readCounts, writeCounts, type StoredCounts } from './outbox-counts.js';
import type { DeviceTotals, StoredRow, StoreOptions } from './outbox-rows.js';
import { recordChecksum, type CheckedRecord } from './record-checksum.js';

export { intact, recordChecksum, type CheckedRecord } from './record-checksum.js';
import type { SqliteDatabase } from './sqlite-types.js';
import { configure, fileIdOf } from './outbox-connection.js';
import { prepareStatements, type StoredRecord, type Statements } from './outbox-statements.js';

export type { DeviceTotals, StoredRow, StoreOptions } from './outbox-rows.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  device TEXT NOT NULL,
  ts INTEGER NOT NULL,
  payload BLOB NOT NULL,
  crc INTEGER
);
`;

/** Bytes a storage probe writes (and deletes): a few pages, so it needs space as a small commit does. */
const PROBE_BYTES = 8192;

export class OutboxStore {
  private db: SqliteDatabase;
  private statements: Statements;
  /**
   * A connection that met a read error keeps failing after the fault heals (SQLite keeps what it
   * read in its page cache): the next use opens a fresh connection to the same file first.
   */
  private reopenDue = false;
  /** A statement that failed keeps failing in the binding: all are prepared afresh before the next use. */
  private stale = false;
  private readonly hasCrc: boolean;
  private readonly overheadBytes: number;

  /** The file's device and inode when opened, to notice it deleted or replaced under us. */
  private readonly fileId: string | undefined;

  constructor(readonly path: string, readonly options: StoreOptions = { synchronous: 'NORMAL' }) {
    if (path !== ':memory:') ensurePrivateFile(path);
    this.fileId = fileIdOf(path);
    this.db = new Database(path) as SqliteDatabase;
    // Small pages (new files only): a commit rewrites whole pages, twice (WAL, then checkpoint).
    this.db.pragma('page_size = 1024');
    configure(this.db, options);
    this.db.exec(SCHEMA);
    // No (device, seq) index: with devices interleaved it touched a page per device per commit,
    // tripling the bytes written. Per-device reads scan the seq (rowid) range instead.
    this.db.exec('DROP INDEX IF EXISTS outbox_device_seq');
    this.hasCrc = this.addChecksumColumn();
    ensureCounts(this.db);
    this.overheadBytes = Math.max(0, Math.trunc(options.rowOverheadBytes ?? 0));
    this.statements = prepareStatements(this.db, this.hasCrc, this.overheadBytes);
  }

  /** What a row with this payload counts in this store's sizes (its payload, plus the in-memory overhead). */
  rowBytes(payloadLength: number): number {
    return payloadLength + this.overheadBytes;
  }

  /**
   * A file from before checksums gets the column (its old rows keep NULL and are accepted). When
   * the file takes no writes now (full, read-only), rows go without checksums until the next open.
   */
  private addChecksumColumn(): boolean {
    const columns = this.db.pragma('table_info(outbox)') as { name: string }[];
    if (columns.some((c) => c.name === 'crc')) return true;
    try {
      this.db.exec('ALTER TABLE outbox ADD COLUMN crc INTEGER');
      return true;
    } catch {
      return false;
    }
  }

  /** After a failed statement (read or write): the next use prepares every statement again, on a fresh connection. */
  markStale(): void {
    this.stale = true;
    if (this.path !== ':memory:') this.reopenDue = true;
  }

  /** The connection, a fresh one first after a failure (never inside a transaction, never to a file that replaced ours). */
  private get live(): SqliteDatabase {
    if (!this.reopenDue || this.db.inTransaction) return this.db;
    this.reopenDue = false;
    if (this.fileReplaced()) return this.db;
    let fresh: SqliteDatabase;
    try {
      fresh = new Database(this.path) as SqliteDatabase;
      configure(fresh, this.options);
    } catch {
      // Not openable now (the fault goes on): the old connection, and another try after the next failure.
      return this.db;
    }
    try {
      this.db.close();
    } catch {
      // A failing connection is abandoned either way.
    }
    this.db = fresh;
    this.stale = true;
    return this.db;
  }

  private get ready(): Statements {
    const db = this.live;
    if (this.stale) {
      this.statements = prepareStatements(db, this.hasCrc, this.overheadBytes);
      this.stale = false;
    }
    return this.statements;
  }

  /** The file's stored per-device figures (rows kept by triggers, dropped counters). */
  counts(): Map<string, StoredCounts> {
    return readCounts(this.live);
  }

  /** Stores devices' rows and dropped counters (inside the caller's transaction). */
  saveCounts(counts: ReadonlyMap<string, StoredCounts>): void {
    writeCounts(this.live, counts);
  }

  /** `read` on a fresh connection (a salvage of a file found corrupt: what the old one cached may be wrong). */
  onFreshConnection<T>(read: (db: SqliteDatabase) => T): T {
    if (this.path !== ':memory:') this.reopenDue = true;
    return read(this.live);
  }

  /** Per-device row counts and payload bytes (at open). */
  totals(): DeviceTotals[] {
    return this.live
      .prepare(`SELECT device, COUNT(*) AS depth, SUM(length(payload) + ${this.overheadBytes}) AS bytes FROM outbox GROUP BY device`)
      .all() as DeviceTotals[];
  }

  /** The highest sequence number ever used, deleted rows included. */
  maxSeq(): number {
    const used = this.live.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'outbox'").get() as { seq: number } | undefined;
    const live = this.live.prepare('SELECT MAX(seq) AS seq FROM outbox').get() as { seq: number | null };
    return Math.max(used?.seq ?? 0, live.seq ?? 0);
  }

  /**
   * Runs `work` in one transaction (one commit, one fsync at most). A failed statement or COMMIT
   * is rethrown as it is: SQLite may already have rolled back (disk full, I/O error), and the
   * binding's own wrapper then threw `cannot rollback - no transaction is active` instead.
   */
  transaction<T>(work: () => T): T {
    this.live.exec('BEGIN');
    try {
      const result = work();
      this.live.exec('COMMIT');
      return result;
    } catch (err) {
      if (this.live.inTransaction) {
        try {
          this.live.exec('ROLLBACK');
        } catch {
          // The first error is the cause; a failed rollback leaves SQLite to roll back on reopen.
        }
      }
      throw err;
    }
  }

  /** Inserts with the sequence number the caller already gave the record. */
  insertWithSeq(row: StoredRow): void {
    // A row carried from another file keeps the checksum it had: damage is never laundered.
    if (this.ready.insertSeq) this.ready.insertSeq.run(row.seq, row.device, row.ts, row.payload, row.crc === undefined ? recordChecksum(row.payload, row.ts) : row.crc);
    else this.ready.insertLegacy.run(row.seq, row.device, row.ts, row.payload);
  }

  /** A device's rows after afterSeq with their stored checksums (see intact()). */
  after(device: string, afterSeq: number, limit: number): CheckedRecord[] {
    return this.ready.selectAfter
      .all(device, afterSeq, limit)
      .map((row) => ({ seq: row.seq, ts: row.ts, payload: Buffer.from(row.payload), crc: row.crc }));
  }

  /** Deletes a device's rows up to seq; returns how many and their payload bytes. */
  deleteThrough(device: string, upToSeq: number): { records: number; bytes: number } {
    const sum = this.ready.sumUpTo.get(device, upToSeq);
    if (!sum || sum.n === 0) return { records: 0, bytes: 0 };
    this.ready.deleteUpTo.run(device, upToSeq);
    return { records: sum.n, bytes: sum.bytes ?? 0 };
  }

  /** Count and payload bytes of a device's rows with afterSeq < seq <= upToSeq (a read). */
  measure(device: string, afterSeq: number, upToSeq: number): { records: number; bytes: number } {
    const sum = this.ready.sumBetween.get(device, afterSeq, upToSeq);
    return { records: sum?.n ?? 0, bytes: sum?.bytes ?? 0 };
  }

  oldestRowsOf(device: string, limit: number): { seq: number; size: number }[] {
    return this.ready.oldestOfDevice.all(device, limit);
  }

  oldestRows(limit: number): { seq: number; device: string; size: number }[] {
    return this.ready.oldestOverall.all(limit);
  }

  deleteOne(seq: number): void {
    this.ready.deleteSeq.run(seq);
  }

  /** Sample time of the oldest row, if any. */
  oldestSampleTs(): number | undefined {
    return this.ready.oldestTs.get()?.ts;
  }

  /** Sample time of a device's oldest row with seq > afterSeq, if any. */
  oldestSampleTsOf(device: string, afterSeq: number): number | undefined {
    return this.ready.oldestTsOf.get(device, afterSeq)?.ts;
  }

  /**
   * A real write that leaves nothing behind: a few pages inserted and deleted in one transaction.
   * Tells whether the file takes writes again when there is nothing else to write.
   */
  probeWrite(): void {
    this.transaction(() => {
      // Made here, not with the schema: opening a file on a full disk must not need a write.
      this.live.exec('CREATE TABLE IF NOT EXISTS storage_probe (data BLOB)');
      this.live.prepare('INSERT INTO storage_probe (data) VALUES (zeroblob(?))').run(PROBE_BYTES);
      this.live.exec('DELETE FROM storage_probe');
    });
  }

  /** Every row with its stored checksum, oldest first (an in-memory store's rows moved to the file). */
  allRows(): StoredRow[] {
    return (this.live.prepare(`SELECT seq, device, ts, payload, ${this.hasCrc ? 'crc' : 'NULL AS crc'} FROM outbox ORDER BY seq`).all() as (StoredRecord & { device: string })[])
      .map((row) => ({ seq: row.seq, device: row.device, ts: row.ts, payload: Buffer.from(row.payload), crc: row.crc }));
  }

  /** The lowest and highest seq held, or undefined when the table is empty. */
  seqRange(): { min: number; max: number } | undefined {
    const row = this.live.prepare('SELECT MIN(seq) AS min, MAX(seq) AS max FROM outbox').get() as { min: number | null; max: number | null };
    return row.min === null || row.max === null ? undefined : { min: row.min, max: row.max };
  }

  /** Adds `offset` to every seq (order kept); the caller makes sure no new seq lands on an old one. */
  shiftSeqs(offset: number): void {
    this.live.prepare('UPDATE outbox SET seq = seq + ?').run(offset);
  }

  /** Makes the next automatic sequence number follow `seq` (a fresh file continues the old one's numbering). */
  continueSequence(seq: number): void {
    this.live.prepare("DELETE FROM sqlite_sequence WHERE name = 'outbox'").run();
    this.live.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('outbox', ?)").run(seq);
  }

  /** True when the path no longer names the file this store has open (deleted, renamed or replaced). */
  fileReplaced(): boolean {
    return this.fileId !== undefined && fileIdOf(this.path) !== this.fileId;
  }

  /** SQLite's quick consistency check (no index cross-checks): ['ok'] for a sound file. */
  quickCheck(): string[] {
    return (this.live.pragma('quick_check') as { quick_check: string }[]).map((row) => row.quick_check);
  }

  /** SQLite's own consistency check: ['ok'] for a sound file, else the problems found. */
  integrityCheck(): string[] {
    return (this.live.pragma('integrity_check') as { integrity_check: string }[]).map((row) => row.integrity_check);
  }

  close(): void {
    this.db.close();
  }
}
