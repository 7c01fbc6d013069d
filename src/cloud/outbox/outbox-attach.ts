// The outbox file taken up late: a start on a state directory that could not hold it (read-only,
// missing, too full to create it) runs from an in-memory store, as when the disk fails later. When
// the file opens and takes writes, one transaction moves everything into it: the in-memory store's
// rows, what the outbox held in memory (its `work`), and the file's own rows from the previous run,
// renumbered after every sequence number already handed out. Forwarders have read up to that
// number, so an older row given a smaller one would be skipped and acknowledged unsent; the old
// rows go out after the newer ones instead (each keeps its poll time), none is skipped. The file is
// opened as at start (outbox-startup.ts): one found corrupt is salvaged row by row, and the dropped
// counters it kept (outbox_counts) join this run's. Every row keeps its checksum.
import { counterIn, restoreCounters, restoreDropped, tally, writeRows, type DropTally } from './outbox-caps.js';
import type { OutboxStore } from './outbox-store.js';
import type { DeviceTotals, StoredRow } from './outbox-rows.js';
import type { OpenedStore } from './outbox-startup.js';
import type { DropListeners, OutboxDeviceStats } from '../../core/outbox-types.js';

export interface Attached {
  /** Every row the file now holds, per device (a recount: the in-memory store counted its rows' memory cost). */
  totals: DeviceTotals[];
  /** The next sequence number to hand out. */
  nextSeq: number;
  /** What opening the file found: the dropped counters it kept, rows its salvage lost or rejected. */
  opened: OpenedStore;
}

/**
 * Inside one transaction of `opened.store`: the file's rows moved to `nextSeq` and after, then
 * `memory`'s rows and `work` (the outbox's own pending rows) added. Throws (rolled back) when the
 * file takes no writes; the caller keeps the in-memory store and tries again later.
 */
export function attachFile(opened: OpenedStore, memory: OutboxStore, nextSeq: number, work: (store: OutboxStore) => void): Attached {
  const file = opened.store;
  return file.transaction(() => {
    // Rows the previous run had acknowledged (their delete never reached the file) go before the renumbering hides them.
    for (const [device, seq] of opened.acked) file.deleteThrough(device, seq);
    const range = file.seqRange();
    let next = Math.max(nextSeq, opened.maxSeq + 1);
    if (range) {
      // Every new number above every old one: no row is ever moved onto another.
      file.shiftSeqs(next - range.min);
      next += range.max - range.min + 1;
    }
    for (const row of memory.allRows()) file.insertWithSeq(row);
    work(file);
    file.continueSequence(next - 1);
    return { totals: file.totals(), nextSeq: next, opened };
  });
}

/** The file an outbox attaches to (StoreKeeper.attach, which runs attachFile). */
export interface AttachTarget {
  attach(nextSeq: number, work: (store: OutboxStore) => void): Attached | undefined;
}

/**
 * An outbox's side of it: `batch` (what it holds in memory), its deferred deletes and `also` (rows
 * that failed their checksum, purged) go in the same transaction; on success its counters are
 * recounted from the file (the file's dropped counters added, its salvage's losses reported) and the
 * deletes are done, on failure they are as before. The caller takes `batch` out of memory and
 * adopts `nextSeq`.
 */
export function attachCounted(file: AttachTarget, counters: Map<string, OutboxDeviceStats>, ackedOnDisk: Map<string, number>, nextSeq: number, batch: readonly StoredRow[], listeners: DropListeners, also?: (store: OutboxStore) => void): Attached | undefined {
  const deletes = [...ackedOnDisk];
  const before = new Map([...counters].map(([device, c]) => [device, { ...c }]));
  const attached = file.attach(nextSeq, (store) => {
    also?.(store);
    writeRows(store, counters, deletes, batch);
  });
  if (!attached) {
    restoreCounters(counters, before);
    return undefined;
  }
  for (const [device, upTo] of deletes) if (ackedOnDisk.get(device) === upTo) ackedOnDisk.delete(device);
  for (const counter of counters.values()) {
    counter.depth = 0;
    counter.bytes = 0;
  }
  for (const { device, depth, bytes } of attached.totals) {
    const counter = counterIn(counters, device);
    counter.depth = depth;
    counter.bytes = bytes;
  }
  restoreDropped(counters, attached.opened, listeners, true);
  return attached;
}

/**
 * At close with the rows in an in-memory store (the file never opened, or lost and not replaced):
 * they end with the process, so each device's held rows are counted as dropped, never silently gone.
 */
export function dropStoreRows(counters: Map<string, OutboxDeviceStats>): DropTally {
  const lost: DropTally = new Map();
  for (const [device, counter] of counters) {
    if (counter.depth <= 0) continue;
    tally(lost, device, counter.depth, counter.bytes);
    counter.dropped += counter.depth;
    counter.depth = 0;
    counter.bytes = 0;
  }
  return lost;
}
