// The outbox file's own per-device figures, beside its rows: how many rows each device has (kept
// by triggers, so exact at every commit) and how many of its reports were dropped (written with
// the outbox's writes). They survive a restart (the dropped counters in /status) and tell, when a
// corrupt file is salvaged at start, how many rows of each device could not be read.
import type { SqliteDatabase } from './sqlite-types.js';

export interface StoredCounts {
  depth: number;
  dropped: number;
}

const COUNTS_SCHEMA = `
CREATE TABLE outbox_counts (device TEXT PRIMARY KEY, depth INTEGER NOT NULL DEFAULT 0, dropped INTEGER NOT NULL DEFAULT 0);
CREATE TRIGGER outbox_counts_insert AFTER INSERT ON outbox BEGIN
  INSERT INTO outbox_counts (device, depth) VALUES (new.device, 1) ON CONFLICT(device) DO UPDATE SET depth = depth + 1;
END;
CREATE TRIGGER outbox_counts_delete AFTER DELETE ON outbox BEGIN
  UPDATE outbox_counts SET depth = depth - 1 WHERE device = old.device;
END;
INSERT INTO outbox_counts (device, depth) SELECT device, COUNT(*) FROM outbox GROUP BY device;
`;

function hasCountsTable(db: SqliteDatabase): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'outbox_counts'").get() !== undefined;
}

/**
 * Adds the counts table and its triggers, filled from the rows, in one transaction (a file from
 * before them). False when the file takes no writes now: the counts are then unknown until the
 * next open that can add them.
 */
export function ensureCounts(db: SqliteDatabase): boolean {
  if (hasCountsTable(db)) return true;
  try {
    db.exec(`BEGIN; ${COUNTS_SCHEMA} COMMIT;`);
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
    if (!hasCountsTable(db)) return counts;
    for (const row of db.prepare('SELECT device, depth, dropped FROM outbox_counts').all() as ({ device: string } & StoredCounts)[]) {
      counts.set(row.device, { depth: row.depth, dropped: row.dropped });
    }
  } catch {
    counts.clear();
  }
  return counts;
}

/** Sets devices' dropped counters (inside the caller's transaction). */
export function writeDropped(db: SqliteDatabase, dropped: ReadonlyMap<string, number>): void {
  if (dropped.size === 0 || !hasCountsTable(db)) return;
  const upsert = db.prepare('INSERT INTO outbox_counts (device, dropped) VALUES (?, ?) ON CONFLICT(device) DO UPDATE SET dropped = excluded.dropped');
  for (const [device, n] of dropped) upsert.run(device, n);
}
