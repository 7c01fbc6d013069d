// Opening the outbox file at start: checked with quick_check (retried on fresh connections, so a
// transient I/O error that SQLite reports as corruption does not cost the file); a file corrupt by
// every attempt is moved aside, kept for inspection, and every row that can still be read is
// carried to a fresh file, in order. Rows that could not be read are counted per device from the
// file's stored counts (outbox-counts.ts), or as unreadable seqs when those are lost too.
import { renameSync } from 'node:fs';
import { tally, type DropTally } from './outbox-caps.js';
import { isCorruption, salvageFile, VERIFY_ATTEMPTS, type Salvaged } from './outbox-salvage.js';
import { intact, OutboxStore, type DeviceTotals, type StoreOptions, type StoredRow } from './outbox-store.js';

export { isCorruption } from './outbox-salvage.js';

/** The device named for lost rows whose device could not be read either. */
export const UNKNOWN_DEVICE = '(unknown)';

export interface MovedAside {
  path: string;
  /** Where the damaged file (and its -wal/-shm) now are. */
  movedTo: string;
  cause: string;
  /** Rows carried to the fresh file, and rows counted as lost (per device in the drops). */
  salvaged?: number;
  lost?: number;
}

export interface OpenedStore {
  store: OutboxStore;
  totals: DeviceTotals[];
  maxSeq: number;
  /** Dropped counters stored in the file, per device (they survive a restart). */
  dropped: Map<string, number>;
  /** Rows of a corrupt file that could not be read, per device (to be reported as 'file-lost'). */
  lost: DropTally;
  /** Rows of a corrupt file that failed their checksum, per device (to be reported as 'checksum'). */
  rejected: DropTally;
  /** Per device, rows up to this seq were acknowledged before the stop but not deleted: not to be sent again (left out of `totals`). */
  acked: Map<string, number>;
}

/** Renames the file and its -wal/-shm to `<path>.corrupt-<time>`; returns the new name. */
export function moveAside(path: string, now: number): string {
  const target = `${path}.corrupt-${new Date(now).toISOString().replace(/[:.]/g, '-')}`;
  for (const suffix of ['', '-wal', '-shm']) {
    try {
      renameSync(`${path}${suffix}`, `${target}${suffix}`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return target;
}

class CorruptFileError extends Error {
  readonly code = 'SQLITE_CORRUPT';
}

function openChecked(path: string, options: StoreOptions): OpenedStore {
  let store: OutboxStore | undefined;
  try {
    store = new OutboxStore(path, options);
    const problems = store.quickCheck();
    if (problems.length !== 1 || problems[0] !== 'ok') throw new CorruptFileError(`quick_check: ${problems.slice(0, 3).join('; ')}`);
    const counts = store.counts();
    const dropped = new Map([...counts].filter(([, c]) => c.dropped > 0).map(([device, c]) => [device, c.dropped]));
    const acked = new Map([...counts].filter(([, c]) => c.acked > 0).map(([device, c]) => [device, c.acked]));
    return { store, totals: unackedTotals(store, acked), maxSeq: store.maxSeq(), dropped, lost: new Map(), rejected: new Map(), acked };
  } catch (err) {
    try {
      store?.close();
    } catch {
      // Closing a damaged file may fail too; the open error is the one to report.
    }
    throw err;
  }
}

/** Rows per device past their ack mark: what is still to be sent. */
function unackedTotals(store: OutboxStore, acked: ReadonlyMap<string, number>): DeviceTotals[] {
  return store.totals().map((t) => {
    const mark = acked.get(t.device);
    if (mark === undefined) return t;
    const held = store.measure(t.device, mark, Number.MAX_SAFE_INTEGER);
    return { device: t.device, depth: held.records, bytes: held.bytes };
  });
}

/** Fills a fresh store with rows (their checksums kept) and continues the sequence, in one transaction, with its figures. */
export function filled(store: OutboxStore, rows: readonly StoredRow[], seq: number, dropped: ReadonlyMap<string, number> = new Map()): OutboxStore {
  const counts = new Map<string, { depth: number; dropped: number; acked: number }>();
  for (const [device, n] of dropped) counts.set(device, { depth: 0, dropped: n, acked: 0 });
  for (const row of rows) {
    const entry = counts.get(row.device) ?? { depth: 0, dropped: 0, acked: 0 };
    entry.depth += 1;
    counts.set(row.device, entry);
  }
  try {
    store.transaction(() => {
      for (const row of rows) store.insertWithSeq(row);
      store.continueSequence(Math.max(seq, rows.at(-1)?.seq ?? 0));
      store.saveCounts(counts);
    });
    return store;
  } catch (err) {
    store.close();
    throw err;
  }
}

/** A salvaged row its device had acknowledged before the stop (its delete never reached the file). */
function acknowledged(salvaged: Salvaged, row: StoredRow): boolean {
  return row.seq <= (salvaged.counts.get(row.device)?.acked ?? 0);
}

/**
 * Rows of each device the stored counts had and the salvage did not find; unreadable seqs when the
 * counts are lost too. The stored depth leaves out acknowledged rows, so found ones are not counted either.
 */
function lostRows(salvaged: Salvaged): DropTally {
  const lost: DropTally = new Map();
  if (salvaged.counts.size === 0) {
    if (salvaged.unreadableSeqs > 0) tally(lost, UNKNOWN_DEVICE, salvaged.unreadableSeqs, 0);
    return lost;
  }
  const found = new Map<string, number>();
  for (const row of salvaged.rows) if (!acknowledged(salvaged, row)) found.set(row.device, (found.get(row.device) ?? 0) + 1);
  for (const [device, counts] of salvaged.counts) {
    const missing = counts.depth - (found.get(device) ?? 0);
    if (missing > 0) tally(lost, device, missing, 0);
  }
  return lost;
}

/**
 * Opens (creating) the outbox file. A file corrupt by every check is moved aside (reported once)
 * and a fresh one opened holding every row that could be read; the rest are in `lost`.
 */
export function openOutboxFile(path: string, options: StoreOptions, now: number, onMovedAside?: (moved: MovedAside) => void): OpenedStore {
  let cause: unknown;
  for (let attempt = 0; attempt < VERIFY_ATTEMPTS; attempt += 1) {
    try {
      return openChecked(path, options);
    } catch (err) {
      if (!isCorruption(err) || path === ':memory:') throw err;
      cause = err;
    }
  }
  const movedTo = moveAside(path, now);
  const salvaged = salvageFile(movedTo);
  const rows: StoredRow[] = [];
  const lost = lostRows(salvaged);
  const rejected: DropTally = new Map();
  // Rows failing their checksum are not carried: counted here, once. Acknowledged ones are not sent again.
  for (const row of salvaged.rows) {
    if (acknowledged(salvaged, row)) continue;
    if (intact({ ...row, crc: row.crc ?? null })) rows.push(row);
    else tally(rejected, row.device, 1, row.payload.length);
  }
  const dropped = new Map([...salvaged.counts].filter(([, c]) => c.dropped > 0).map(([device, c]) => [device, c.dropped]));
  let lostTotal = 0;
  for (const tallied of [lost, rejected]) {
    for (const [device, entry] of tallied) {
      dropped.set(device, (dropped.get(device) ?? 0) + entry.records);
      lostTotal += entry.records;
    }
  }
  const text = cause instanceof Error ? `${String((cause as { code?: unknown }).code)}: ${cause.message}` : String(cause);
  onMovedAside?.({ path, movedTo, cause: text, salvaged: rows.length, lost: lostTotal });
  const fresh = openChecked(path, options);
  filled(fresh.store, rows, salvaged.maxSeq, dropped);
  return { store: fresh.store, totals: fresh.store.totals(), maxSeq: fresh.store.maxSeq(), dropped, lost, rejected, acked: new Map() };
}
