// The outbox's SQLite file as a whole: opened with a consistency check (outbox-startup.ts), and
// replaced while running when it was deleted, renamed or found corrupt (an error SQLite calls
// corruption is verified on fresh connections first): its readable rows, read one by one, go to a
// fresh file.
import { existsSync, unlinkSync } from 'node:fs';
import { restoreDropped } from './outbox-caps.js';
import { CountsLedger } from './outbox-counts.js';
import { filled, isCorruption, moveAside, openOutboxFile, type MovedAside, type OpenedStore } from './outbox-startup.js';
import { salvageRows, verifyFile } from './outbox-salvage.js';
import { StorageHealth, type StorageListener } from './outbox-storage.js';
import type { DropListeners, OutboxDeviceStats } from '../../core/outbox-types.js';
import { intact, OutboxStore, type StoredRow, type StoreOptions } from './outbox-store.js';
import { attachFile, type Attached } from './outbox-attach.js';
import { systemWallClock } from '../../core/time.js';

export { isCorruption, moveAside, openOutboxFile, type MovedAside, type OpenedStore } from './outbox-startup.js';
export { recountAfterLoss, recountAfterReplace } from './outbox-recount.js';

/** How long a file must be found corrupt, verification after verification, before it is given up. */
export const DEFAULT_CONDEMN_AFTER_MS = 60_000;

export interface Replaced {
  store: OutboxStore;
  onDisk: boolean;
  complete: boolean;
  movedTo?: string;
  /** Rows carried to the fresh store, and seqs whose lookup failed in the salvage. */
  salvaged: number;
  unreadableSeqs: number;
}

/**
 * A fresh file at `path` holding every row of `old` that can still be read, with its sequence
 * continued; `old` is closed first (its last close removes its -wal/-shm, so they cannot be taken
 * for the new file's). With `moveAwayFirst` the old file is renamed aside (corrupt), else it is
 * already gone from the path (deleted or replaced). When no file can be made there (read-only,
 * full), the rows go to an in-memory store (`onDisk: false`) and a later call tries again.
 */
export function replaceFile(old: OutboxStore, path: string, now: number, moveAwayFirst: boolean): Replaced {
  let rows: StoredRow[] = [];
  let seq = 0;
  let complete = true;
  let unreadableSeqs = 0;
  try {
    // Rows failing their checksum stay behind (counted by the caller's recount, or already counted).
    // Row by row: one bad page costs its own rows, not the file's.
    const salvaged = old.onFreshConnection((db) => salvageRows(db));
    rows = salvaged.rows.filter((row) => intact({ ...row, crc: row.crc ?? null }));
    complete = salvaged.complete && rows.length === salvaged.rows.length;
    seq = salvaged.maxSeq;
    unreadableSeqs = salvaged.unreadableSeqs;
  } catch {
    complete = false;
  }
  try {
    old.close();
  } catch {
    // A damaged or vanished file; its connection is abandoned either way.
  }
  let movedTo: string | undefined;
  try {
    // A file now at the path is not the one we had open (replaced): kept aside like a corrupt one.
    if (moveAwayFirst || existsSync(path)) movedTo = moveAside(path, now);
    // The deleted file's -wal/-shm, if left behind, must not be taken for the fresh file's.
    else removeLeftovers(path);
    return { store: filled(new OutboxStore(path, old.options), rows, seq), onDisk: true, complete, salvaged: rows.length, unreadableSeqs, ...(movedTo ? { movedTo } : {}) };
  } catch {
    return { store: filled(new OutboxStore(':memory:', old.options), rows, seq), onDisk: false, complete, salvaged: rows.length, unreadableSeqs, ...(movedTo ? { movedTo } : {}) };
  }
}

function closeQuietly(store: OutboxStore): void {
  try {
    store.close();
  } catch {
    // Abandoned either way.
  }
}

function removeLeftovers(path: string): void {
  for (const suffix of ['-wal', '-shm']) {
    try {
      unlinkSync(`${path}${suffix}`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

export interface KeeperHooks {
  /** Monotonic: storage episodes and how often a suspect file is verified. */
  now: () => number;
  /** Wall clock: the date in a moved-aside file's name (the system's by default). */
  wallNow?: () => number;
  onStorage?: StorageListener;
  onMovedAside?: (moved: MovedAside) => void;
  /** A file suspected corrupt is verified at most this often (the outbox's retry period). */
  verifyEveryMs?: number;
  /**
   * A file is given up only when found corrupt by every verification for this long: an I/O error
   * (which SQLite reports as corruption, in quick_check too) is transient until then.
   */
  condemnAfterMs?: number;
  /** What a report costs in memory beyond its payload: counted by the in-memory store a start without the file runs from. */
  memoryOverheadBytes?: number;
}

/**
 * The open store and whether it takes writes. An outbox reports each failure and success here;
 * check() (periodic, and before each retry) swaps in a fresh file when the path lost the open one
 * (deleted, replaced) or a failure said the file is corrupt.
 */
export class StoreKeeper {
  store: OutboxStore;
  readonly health: StorageHealth;
  readonly opened: OpenedStore;
  private corrupt = false;
  private verifiedAt = -Infinity;
  /** When a verification first found the file corrupt, in this run of verdicts (an 'ok' ends it). */
  private corruptSince: number | undefined;

  /** True while the file could not be opened at start: the store is in memory until attach() succeeds. */
  private detachedSinceStart = false;

  private readonly wallNow: () => number;

  constructor(private readonly path: string, private readonly options: StoreOptions, private readonly hooks: KeeperHooks) {
    this.wallNow = hooks.wallNow ?? systemWallClock.wallNow;
    this.health = new StorageHealth(hooks.now, hooks.onStorage);
    try {
      this.opened = openOutboxFile(path, options, this.wallNow(), hooks.onMovedAside);
    } catch (err) {
      // A state directory read-only, missing or too full to create the file in: run from memory
      // as when the disk fails later (reported as failing), and take the file up when it opens.
      if (path === ':memory:') throw err;
      // Its rows are held in memory: each counts its memory cost against the caps (a recount at attach).
      const store = new OutboxStore(':memory:', { ...options, rowOverheadBytes: hooks.memoryOverheadBytes ?? 0 });
      this.opened = { store, totals: [], maxSeq: 0, dropped: new Map(), lost: new Map(), rejected: new Map(), acked: new Map() };
      this.detachedSinceStart = true;
      this.health.failed(err);
    }
    this.store = this.opened.store;
  }

  /** The rows live in an in-memory store (not opened at start, or a replacement found no place): they end with the process. */
  get inMemory(): boolean {
    return this.store.path !== this.path;
  }

  /** The file was never opened (start on a bad state directory): the outbox must call attach(). */
  get detached(): boolean {
    return this.detachedSinceStart;
  }

  /**
   * Opens the file and moves everything into it (see outbox-attach.ts): `work` adds the outbox's
   * own pending rows in the same transaction. Undefined (failure counted, store unchanged) while
   * the file cannot be opened or takes no writes.
   */
  attach(nextSeq: number, work: (store: OutboxStore) => void): Attached | undefined {
    let opened: OpenedStore;
    try {
      opened = openOutboxFile(this.path, this.options, this.wallNow(), this.hooks.onMovedAside);
    } catch (err) {
      this.health.failed(err);
      return undefined;
    }
    let attached: Attached;
    try {
      attached = attachFile(opened, this.store, nextSeq, work);
    } catch (err) {
      // Reopened at the next attempt: a connection opened on a read-only mount stays read-only.
      closeQuietly(opened.store);
      this.health.failed(err);
      return undefined;
    }
    closeQuietly(this.store);
    this.store = opened.store;
    this.detachedSinceStart = false;
    this.health.succeeded();
    return attached;
  }

  get ok(): boolean {
    return this.health.ok;
  }

  /** A write failed. */
  failed(err: unknown): void {
    this.suspect(err);
    this.health.failed(err);
  }

  /** A read or write failed: an error SQLite calls corruption gets the file checked at the next check(). */
  suspect(err: unknown): void {
    this.store.markStale();
    if (isCorruption(err)) this.corrupt = true;
  }

  /** While this holds (the file's reads fail), a write that goes through does not end a storage episode. */
  private holdBack: () => boolean = () => false;

  /**
   * Commits succeed and fail by turns while a card errs on read (each touches other pages): the
   * storage episode ends once, when writes go through with reads back, not at every commit.
   */
  holdStorageBackWhile(condition: () => boolean): void {
    this.holdBack = condition;
  }

  /** A write reached the store; it counts as storage back only when the store is the file (and reads are not failing). */
  succeeded(): void {
    if (this.store.path === this.path && !this.holdBack()) this.health.succeeded();
  }

  /** Nothing to write while failing: a small real write tells whether the file takes writes again (false while held back). */
  probe(): boolean {
    try {
      this.store.probeWrite();
      this.succeeded();
      return this.health.ok;
    } catch (err) {
      this.failed(err);
      return false;
    }
  }

  /**
   * Replaces the store when its file is gone from the path, corrupt, or when the rows live in
   * memory after an earlier replacement failed. Returns whether it did, and whether every row
   * came along (when not, the caller recounts).
   */
  check(): { replaced: boolean; complete: boolean; movedAside?: MovedAside } {
    // Never opened: attach() takes the file up (a replacement would move its rows aside unread).
    if (this.detachedSinceStart) return { replaced: false, complete: true };
    const inMemory = this.store.path !== this.path;
    const gone = !inMemory && this.store.fileReplaced();
    if (!inMemory && !gone && !this.corrupt) return { replaced: false, complete: true };
    if (!inMemory && !gone) {
      // SQLite reports some I/O errors as corruption: the file is checked afresh before it is
      // given up. Sound: kept as it is. An I/O error again: checked again at a later check, at
      // most once per verifyEveryMs (each check reads the whole file, up to 3 times).
      const now = this.hooks.now();
      if (now - this.verifiedAt < (this.hooks.verifyEveryMs ?? 1000)) return { replaced: false, complete: true };
      this.verifiedAt = now;
      const verdict = verifyFile(this.path);
      if (verdict === 'ok') {
        this.corrupt = false;
        this.corruptSince = undefined;
      }
      if (verdict !== 'corrupt') return { replaced: false, complete: true };
      this.corruptSince ??= now;
      if (now - this.corruptSince < (this.hooks.condemnAfterMs ?? DEFAULT_CONDEMN_AFTER_MS)) return { replaced: false, complete: true };
    }
    if (gone) this.health.failed(new Error(`the outbox file ${this.path} was deleted or replaced while open`));
    const moveAway = this.corrupt && !gone && !inMemory;
    const result = replaceFile(this.store, this.path, this.wallNow(), moveAway);
    this.store = result.store;
    this.corrupt = false;
    this.corruptSince = undefined;
    // Told by the outbox once it has recounted: the line says what was carried and what was lost.
    const movedAside = result.movedTo ? { path: this.path, movedTo: result.movedTo, cause: moveAway ? 'found corrupt while running' : 'another file took its place while running', salvaged: result.salvaged } : undefined;
    if (result.onDisk) this.health.succeeded();
    return { replaced: true, complete: result.complete, ...(movedAside ? { movedAside } : {}) };
  }
}

/**
 * An outbox's file at start: the keeper, `counters` filled with its rows and the dropped counts it
 * kept (a salvage's losses reported), `ackedOnDisk` with the rows acknowledged before the stop but
 * not deleted (skipped, deleted at the next write), the ledger of what it stores, and the next seq.
 */
export function openKept(path: string, options: StoreOptions, hooks: KeeperHooks, counters: Map<string, OutboxDeviceStats>, ackedOnDisk: Map<string, number>, listeners: DropListeners): { file: StoreKeeper; counts: CountsLedger; nextSeq: number } {
  const file = new StoreKeeper(path, options, hooks);
  for (const row of file.opened.totals) counters.set(row.device, { depth: row.depth, bytes: row.bytes, dropped: 0 });
  for (const [device, seq] of file.opened.acked) ackedOnDisk.set(device, seq);
  restoreDropped(counters, file.opened, listeners);
  return { file, counts: new CountsLedger(file.opened.dropped, ackedOnDisk), nextSeq: file.opened.maxSeq + 1 };
}
