// Rows read one by one out of a damaged outbox file: every row that can be read is kept, in seq
// order, and the damage is stepped over a seq at a time (a range query stops at the first bad
// page; a lookup by seq only touches the pages on that row's path).
import Database from 'libsql';
import { readCounts, type StoredCounts } from './outbox-counts.js';
import type { SqliteDatabase } from './sqlite-types.js';
import type { StoredRow } from './outbox-rows.js';

/** Seqs stepped over one by one past the last readable row when the highest seq cannot be read (a damaged tail). */
export const MAX_BLIND_STEPS = 10_000;

/**
 * The longest a salvage may take (it runs on the event loop): whatever it has not reached by then
 * is counted as lost. A failing lookup costs far more than a good one, and a damaged range of a
 * long-running file can span millions of seqs.
 */
export const SALVAGE_BUDGET_MS = 2000;

export interface Salvaged {
  /** Every readable row, oldest first, with its stored checksum. */
  rows: StoredRow[];
  /** Seqs whose lookup failed: unreadable rows (or, inside a damaged page, seqs that had none). */
  unreadableSeqs: number;
  /** True when every lookup succeeded. */
  complete: boolean;
  /** True when the salvage stopped at its time budget, before reaching the highest seq. */
  outOfTime?: boolean;
  maxSeq: number;
  /** The file's stored figures per device (empty when they could not be read). */
  counts: Map<string, StoredCounts>;
}

type Row = { seq: number; device: string; ts: number; payload: ArrayBuffer; crc: number | null };

function highestSeq(db: SqliteDatabase): number {
  for (const sql of ["SELECT seq FROM sqlite_sequence WHERE name = 'outbox'", 'SELECT MAX(seq) AS seq FROM outbox']) {
    try {
      const seq = (db.prepare(sql).get() as { seq: number | null } | undefined)?.seq;
      if (typeof seq === 'number') return seq;
    } catch {
      // The next source, or none.
    }
  }
  return 0;
}

function hasCrc(db: SqliteDatabase): boolean {
  try {
    return (db.pragma('table_info(outbox)') as { name: string }[]).some((c) => c.name === 'crc');
  } catch {
    return false;
  }
}

/** Reads every readable row of an open (possibly damaged) outbox database, within `budgetMs`. */
export function salvageRows(db: SqliteDatabase, budgetMs = SALVAGE_BUDGET_MS): Salvaged {
  // A CPU budget for this one synchronous call, not a schedule: the process's own timer.
  const deadline = performance.now() + budgetMs;
  const maxSeq = highestSeq(db);
  const columns = `seq, device, ts, payload, ${hasCrc(db) ? 'crc' : 'NULL AS crc'}`;
  const rows: StoredRow[] = [];
  let unreadableSeqs = 0;
  let failed = false;
  let next: ReturnType<SqliteDatabase['prepare']> | undefined;
  let one: ReturnType<SqliteDatabase['prepare']> | undefined;
  // A statement that failed stays failed in the binding: both are prepared afresh after an error.
  const prepare = () => {
    next = db.prepare(`SELECT ${columns} FROM outbox WHERE seq > ? ORDER BY seq LIMIT 1`);
    one = db.prepare(`SELECT ${columns} FROM outbox WHERE seq = ?`);
  };
  try {
    prepare();
  } catch {
    // The schema itself cannot be read: nothing can be salvaged.
    return { rows, unreadableSeqs: 0, complete: false, maxSeq, counts: readCounts(db) };
  }
  if (!next || !one) return { rows, unreadableSeqs: 0, complete: false, maxSeq, counts: readCounts(db) };
  const keep = (row: Row) => rows.push({ seq: row.seq, device: row.device, ts: row.ts, payload: Buffer.from(row.payload), crc: row.crc });
  let cursor = 0;
  // Without the highest seq, blind steps go MAX_BLIND_STEPS past the last row read, not to an
  // absolute number: a long-running file's seqs are far beyond any fixed one.
  let lastRead = 0;
  const last = () => (maxSeq > 0 ? maxSeq : lastRead + MAX_BLIND_STEPS);
  let outOfTime = false;
  for (;;) {
    if (performance.now() > deadline) {
      outOfTime = true;
      failed = true;
      break;
    }
    try {
      const row = next.get(cursor) as Row | undefined;
      if (!row) break;
      keep(row);
      cursor = row.seq;
      lastRead = row.seq;
      continue;
    } catch {
      failed = true;
      prepare();
    }
    // Step over the damage: one seq at a time, each failed lookup counted.
    cursor += 1;
    if (cursor > last()) break;
    try {
      const row = one.get(cursor) as Row | undefined;
      if (row) {
        keep(row);
        lastRead = row.seq;
      }
    } catch {
      unreadableSeqs += 1;
      prepare();
    }
  }
  return { rows, unreadableSeqs, complete: !failed, maxSeq, counts: readCounts(db), ...(outOfTime ? { outOfTime } : {}) };
}

/** Salvages a damaged file at `path` (opened as it is, nothing written to it); empty when it cannot be opened at all. */
export function salvageFile(path: string): Salvaged {
  let db: SqliteDatabase;
  try {
    db = new Database(path, { readonly: true }) as SqliteDatabase;
  } catch {
    try {
      // Read-only needs the -shm of a WAL file; the moved-aside copy is ours to open for writing.
      db = new Database(path) as SqliteDatabase;
    } catch {
      return { rows: [], unreadableSeqs: 0, complete: false, maxSeq: 0, counts: new Map() };
    }
  }
  try {
    return salvageRows(db);
  } finally {
    try {
      db.close();
    } catch {
      // A damaged file's connection is abandoned either way.
    }
  }
}

/** SQLite's codes for a file that is not a sound database (an I/O error can be reported so too). */
export function isCorruption(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_CORRUPT') || code.startsWith('SQLITE_NOTADB'));
}

/** ok: the file is sound; corrupt: every attempt found it damaged; unreadable: an I/O error, try again later. */
export type Verdict = 'ok' | 'corrupt' | 'unreadable';

/** Attempts (each a fresh connection and a full quick_check) before a file is called corrupt. */
export const VERIFY_ATTEMPTS = 3;

function verifyOnce(path: string): Verdict {
  let db: SqliteDatabase | undefined;
  try {
    db = new Database(path) as SqliteDatabase;
    const problems = (db.pragma('quick_check') as { quick_check: string }[]).map((row) => row.quick_check);
    return problems.length === 1 && problems[0] === 'ok' ? 'ok' : 'corrupt';
  } catch (err) {
    return isCorruption(err) ? 'corrupt' : 'unreadable';
  } finally {
    try {
      db?.close();
    } catch {
      // The verdict stands.
    }
  }
}

/**
 * Tells a transient I/O error (which SQLite may report as SQLITE_CORRUPT) from a damaged file: a
 * fresh connection's quick_check, up to VERIFY_ATTEMPTS times; corrupt only when every one says so.
 */
export function verifyFile(path: string): Verdict {
  let unreadable = false;
  for (let attempt = 0; attempt < VERIFY_ATTEMPTS; attempt += 1) {
    const verdict = verifyOnce(path);
    if (verdict === 'ok') return 'ok';
    if (verdict === 'unreadable') unreadable = true;
  }
  return unreadable ? 'unreadable' : 'corrupt';
}
