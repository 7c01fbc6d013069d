// The outbox store's prepared statements (outbox-store.ts): made once, and afresh after any error
// (a statement that failed keeps failing in the binding). Sizes count each row's payload plus the
// store's per-row overhead (an in-memory store counts what a row costs in memory).
import type { SqliteDatabase, Statement } from './sqlite-types.js';
import type { OutboxRecord } from '../../core/outbox-types.js';

/** A row as libsql returns it: BLOBs arrive as ArrayBuffer. */
export type StoredRecord = Omit<OutboxRecord, 'payload'> & { payload: ArrayBuffer; crc: number | null };

export interface Statements {
  insertSeq: Statement<[number, string, number, Buffer, number | null]> | undefined;
  insertLegacy: Statement<[number, string, number, Buffer]>;
  selectAfter: Statement<[string, number, number], StoredRecord>;
  sumUpTo: Statement<[string, number], { n: number; bytes: number | null }>;
  deleteUpTo: Statement<[string, number]>;
  sumBetween: Statement<[string, number, number], { n: number; bytes: number | null }>;
  oldestOfDevice: Statement<[string, number], { seq: number; size: number }>;
  oldestOverall: Statement<[number], { seq: number; device: string; size: number }>;
  deleteSeq: Statement<[number]>;
  oldestTs: Statement<[], { ts: number }>;
  oldestTsOf: Statement<[string, number], { ts: number }>;
}

export function prepareStatements(db: SqliteDatabase, hasCrc: boolean, overheadBytes: number): Statements {
  const crcColumn = hasCrc ? 'crc' : 'NULL AS crc';
  const size = `(length(payload) + ${overheadBytes})`;
  return {
    insertSeq: hasCrc ? db.prepare('INSERT INTO outbox (seq, device, ts, payload, crc) VALUES (?, ?, ?, ?, ?)') : undefined,
    insertLegacy: db.prepare('INSERT INTO outbox (seq, device, ts, payload) VALUES (?, ?, ?, ?)'),
    selectAfter: db.prepare(`SELECT seq, ts, payload, ${crcColumn} FROM outbox WHERE device = ? AND seq > ? ORDER BY seq LIMIT ?`),
    sumUpTo: db.prepare(`SELECT COUNT(*) AS n, SUM${size} AS bytes FROM outbox WHERE device = ? AND seq <= ?`),
    sumBetween: db.prepare(`SELECT COUNT(*) AS n, SUM${size} AS bytes FROM outbox WHERE device = ? AND seq > ? AND seq <= ?`),
    deleteUpTo: db.prepare('DELETE FROM outbox WHERE device = ? AND seq <= ?'),
    oldestOfDevice: db.prepare(`SELECT seq, ${size} AS size FROM outbox WHERE device = ? ORDER BY seq LIMIT ?`),
    oldestOverall: db.prepare(`SELECT seq, device, ${size} AS size FROM outbox ORDER BY seq LIMIT ?`),
    deleteSeq: db.prepare('DELETE FROM outbox WHERE seq = ?'),
    oldestTs: db.prepare('SELECT ts FROM outbox ORDER BY seq LIMIT 1'),
    oldestTsOf: db.prepare('SELECT ts FROM outbox WHERE device = ? AND seq > ? ORDER BY seq LIMIT 1'),
  };
}
