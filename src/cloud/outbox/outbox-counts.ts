// The outbox file's own per-device figures, beside its rows: how many rows each device has and how
// many of its reports were dropped, written with the outbox's writes (the rows at most once per
// COUNTS_EVERY_MS, or a commit's extra page would double write-ahead's bytes per report; the
// dropped counters whenever they change). They survive a restart (the dropped counters in
// /status) and tell, when a corrupt file is salvaged at start, how many rows of each device could
// not be read. `acked` is the seq up to which a device's rows were acknowledged though perhaps not
// yet deleted (the delete waits for a write the file did not take): such rows are neither sent
// again nor taken for unread ones after a restart.
import type { SqliteDatabase } from './sqlite-types.js';

export interface StoredCounts {
  depth: number;
  dropped: number;
  /** Rows of the device up to this seq were acknowledged (0: none waits to be deleted). */
  acked: number;
}

/** The rows per device are stored at most this often (and at every memory-first write, at most one per window). */
export const COUNTS_EVERY_MS = 1000;

const COUNTS_SCHEMA = `
CREATE TABLE outbox_counts (device TEXT PRIMARY KEY, depth INTEGER NOT NULL DEFAULT 0, dropped INTEGER NOT NULL DEFAULT 0, acked INTEGER NOT NULL DEFAULT 0);
INSERT INTO outbox_counts (device, depth) SELECT device, COUNT(*) FROM outbox GROUP BY device;
`;

/** The counts table's columns (empty without the table). */
function countsColumns(db: SqliteDatabase): Set<string> {
  return new Set((db.pragma('table_info(outbox_counts)') as { name: string }[]).map((c) => c.name));
}

/**
 * Adds the counts table, filled from the rows, in one transaction (a file from before it), or its
 * `acked` column (a file from before that). False when the file takes no writes now: the counts
 * (or the ack marks) are then unknown until the next open that can add them.
 */
export function ensureCounts(db: SqliteDatabase): boolean {
  const columns = countsColumns(db);
  if (columns.has('acked')) return true;
  try {
    db.exec(columns.size === 0 ? `BEGIN; ${COUNTS_SCHEMA} COMMIT;` : 'ALTER TABLE outbox_counts ADD COLUMN acked INTEGER NOT NULL DEFAULT 0');
    return true;
  } catch {
    if (db.inTransaction) db.exec('ROLLBACK');
    return false;
  }
}

/** The stored figures per device; empty when the file has no counts table (or it cannot be read). */
export function readCounts(db: SqliteDatabase): Map<string, StoredCounts> {
  const counts = new Map<string, StoredCounts>();
  try {
    const columns = countsColumns(db);
    if (columns.size === 0) return counts;
    const acked = columns.has('acked') ? 'acked' : '0 AS acked';
    for (const row of db.prepare(`SELECT device, depth, dropped, ${acked} FROM outbox_counts`).all() as ({ device: string } & StoredCounts)[]) {
      counts.set(row.device, { depth: row.depth, dropped: row.dropped, acked: row.acked });
    }
  } catch {
    counts.clear();
  }
  return counts;
}

/** Stores devices' figures (inside the caller's transaction). */
export function writeCounts(db: SqliteDatabase, counts: ReadonlyMap<string, StoredCounts>): void {
  if (counts.size === 0) return;
  const columns = countsColumns(db);
  if (columns.size === 0) return;
  if (!columns.has('acked')) {
    const legacy = db.prepare('INSERT INTO outbox_counts (device, depth, dropped) VALUES (?, ?, ?) ON CONFLICT(device) DO UPDATE SET depth = excluded.depth, dropped = excluded.dropped');
    for (const [device, c] of counts) legacy.run(device, c.depth, c.dropped);
    return;
  }
  const upsert = db.prepare('INSERT INTO outbox_counts (device, depth, dropped, acked) VALUES (?, ?, ?, ?) ON CONFLICT(device) DO UPDATE SET depth = excluded.depth, dropped = excluded.dropped, acked = excluded.acked');
  for (const [device, c] of counts) upsert.run(device, c.depth, c.dropped, c.acked);
}

/**
 * When an outbox's next write stores its figures: at once when a dropped counter changed (they
 * are what /status shows after a restart), else at most once per COUNTS_EVERY_MS.
 */
export class CountsLedger {
  private savedAt = -Infinity;
  private readonly savedDropped: Map<string, number>;
  private readonly savedAcked = new Map<string, number>();

  /** `acked`: the outbox's rows acknowledged and not yet deleted, per device (stored with the counts). */
  constructor(saved: ReadonlyMap<string, number>, private readonly acked: ReadonlyMap<string, number> = new Map()) {
    this.savedDropped = new Map(saved);
  }

  /** A dropped counter the file does not hold yet (a write is due for it). */
  droppedChanged(counters: ReadonlyMap<string, { dropped: number }>): boolean {
    for (const [device, c] of counters) if (c.dropped !== (this.savedDropped.get(device) ?? 0)) return true;
    return false;
  }

  /** An ack mark the file does not hold yet: its rows would be sent again after a restart. */
  private ackedChanged(): boolean {
    for (const [device, seq] of this.acked) if (seq > (this.savedAcked.get(device) ?? 0)) return true;
    return false;
  }

  /** The figures the current write should store, or undefined when none are due. */
  due(counters: ReadonlyMap<string, { depth: number; dropped: number }>, now: number, force = false): Map<string, StoredCounts> | undefined {
    if (!force && now - this.savedAt < COUNTS_EVERY_MS && !this.droppedChanged(counters)) return undefined;
    return new Map([...counters].map(([device, c]) => [device, { depth: c.depth, dropped: c.dropped, acked: this.acked.get(device) ?? 0 }]));
  }

  /** At close: figures the file does not hold yet (a dropped counter or an ack mark). */
  unsaved(counters: ReadonlyMap<string, { dropped: number }>): boolean {
    return this.droppedChanged(counters) || this.ackedChanged();
  }

  /** The write that stored `counts` committed. */
  saved(counts: ReadonlyMap<string, StoredCounts> | undefined, now: number): void {
    if (!counts) return;
    this.savedAt = now;
    for (const [device, c] of counts) {
      this.savedDropped.set(device, c.dropped);
      this.savedAcked.set(device, c.acked);
    }
  }

  /** A fresh file holds none of them. */
  reset(): void {
    this.savedAt = -Infinity;
    this.savedDropped.clear();
    this.savedAcked.clear();
  }
}

/**
 * At close, after the last write: drops counted since (memory lost to a failed write, rows of an
 * in-memory store) and rows acknowledged but not deleted (their delete failed) stored in the file
 * when it still takes this small write. When it does not, they
 * were reported and are lost with the file's other writes; an in-memory store keeps nothing.
 */
export function saveDroppedAtClose(
  file: { inMemory: boolean; store: { transaction<T>(work: () => T): T; saveCounts(counts: ReadonlyMap<string, StoredCounts>): void } },
  ledger: CountsLedger, counters: ReadonlyMap<string, { depth: number; dropped: number }>, now: number,
): void {
  if (file.inMemory || !ledger.unsaved(counters)) return;
  const counts = ledger.due(counters, now, true);
  if (!counts) return;
  try {
    file.store.transaction(() => file.store.saveCounts(counts));
    ledger.saved(counts, now);
  } catch {
    // The failure that lost them was reported (storage failing); nothing more to do at a stop.
  }
}
