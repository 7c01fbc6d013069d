// The per-device counters of both outbox modes, kept with their writes: rows written and counted
// (restored when the write rolls back), and the oldest rows on disk dropped when an outbox is over
// its byte caps (inside the caller's transaction). Memory-first callers count their memory bytes
// in `extraBytes`.
import type { MemoryQueue } from './outbox-memory.js';
import type { OutboxStore, StoredRow } from './outbox-store.js';
import type { DropListeners, OutboxDeviceStats, OutboxDropInfo } from '../../core/outbox-types.js';

export type DropTally = Map<string, { records: number; bytes: number }>;

export function tally(into: DropTally, device: string, records: number, bytes: number): void {
  const entry = into.get(device) ?? { records: 0, bytes: 0 };
  entry.records += records;
  entry.bytes += bytes;
  into.set(device, entry);
}

/** Each device's share, then the event once with its total and the count per device. */
export function reportDrops(tallied: DropTally, reason: OutboxDropInfo['reason'], listeners: DropListeners, seq?: number): void {
  let records = 0;
  let bytes = 0;
  const byDevice: Record<string, number> = {};
  for (const [device, entry] of tallied) {
    if (entry.records === 0) continue;
    listeners.onDrop?.({ device, ...entry, reason, ...(seq === undefined ? {} : { seq }) });
    records += entry.records;
    bytes += entry.bytes;
    byDevice[device] = entry.records;
  }
  if (records > 0) listeners.onLoss?.({ reason, records, bytes, byDevice });
}

/** Deletes a device's oldest disk rows until its bytes (disk + extra) fit `cap`. */
export function dropOldestOfDevice(store: OutboxStore, disk: OutboxDeviceStats, device: string, cap: number, extraBytes = 0): DropTally {
  const dropped: DropTally = new Map();
  while (disk.bytes + extraBytes > cap && disk.depth > 0) {
    const oldest = store.oldestRowsOf(device, 256);
    if (oldest.length === 0) break;
    for (const row of oldest) {
      if (disk.bytes + extraBytes <= cap) break;
      store.deleteOne(row.seq);
      disk.bytes -= row.size;
      disk.depth -= 1;
      disk.dropped += 1;
      tally(dropped, device, 1, row.size);
    }
  }
  return dropped;
}

/**
 * Deletes disk rows until all bytes (disk + `heldElsewhere`) fit `cap`, fairly: each row deleted
 * is the oldest of the device holding the most bytes, so a device reporting 20 times a second
 * loses its own history before a slow device loses any of its outage.
 */
export function dropFairOverall(store: OutboxStore, counters: ReadonlyMap<string, OutboxDeviceStats>, cap: number, heldElsewhere: (device: string) => number = () => 0): DropTally {
  let total = 0;
  for (const [device, c] of counters) total += c.bytes + heldElsewhere(device);
  const dropped: DropTally = new Map();
  const fetched = new Map<string, { seq: number; size: number }[]>();
  while (total > cap) {
    const device = largestOnDisk(counters, heldElsewhere);
    if (device === undefined) break;
    let rows = fetched.get(device);
    if (!rows || rows.length === 0) {
      rows = store.oldestRowsOf(device, 64);
      fetched.set(device, rows);
    }
    const row = rows.shift();
    const c = counters.get(device);
    if (!row || !c) break;
    store.deleteOne(row.seq);
    c.bytes -= row.size;
    c.depth -= 1;
    c.dropped += 1;
    total -= row.size;
    tally(dropped, device, 1, row.size);
  }
  return dropped;
}

/** The device with rows on disk that holds the most bytes in all. */
function largestOnDisk(counters: ReadonlyMap<string, OutboxDeviceStats>, heldElsewhere: (device: string) => number): string | undefined {
  let best: string | undefined;
  let most = -1;
  for (const [device, c] of counters) {
    const held = c.bytes + heldElsewhere(device);
    if (c.depth > 0 && held > most) {
      most = held;
      best = device;
    }
  }
  return best;
}

/**
 * One outbox write, inside the store's transaction: acknowledged rows deleted first (so the caps
 * never count them twice), then the batch inserted and counted per device. Returns the devices
 * the batch touched.
 */
export function writeRows(store: OutboxStore, counters: Map<string, OutboxDeviceStats>, deletes: readonly (readonly [string, number])[], batch: readonly StoredRow[]): Set<string> {
  const touched = new Set<string>();
  for (const [device, upTo] of deletes) store.deleteThrough(device, upTo);
  for (const record of batch) {
    store.insertWithSeq(record);
    const counter = counterIn(counters, record.device);
    counter.depth += 1;
    counter.bytes += store.rowBytes(record.payload.length);
    touched.add(record.device);
  }
  return touched;
}

/** After a rolled-back write: the counters as they were before it (devices it created removed). */
export function restoreCounters(counters: Map<string, OutboxDeviceStats>, before: ReadonlyMap<string, OutboxDeviceStats>): void {
  for (const device of [...counters.keys()]) if (!before.has(device)) counters.delete(device);
  for (const [device, saved] of before) Object.assign(counterIn(counters, device), saved);
}

/** Each device's committed counters copied, and their sums: what both outboxes' stats start from. */
export function diskTotals(counters: ReadonlyMap<string, OutboxDeviceStats>): { devices: Record<string, OutboxDeviceStats>; onDisk: number; diskBytes: number; dropped: number } {
  const devices: Record<string, OutboxDeviceStats> = {};
  let onDisk = 0;
  let diskBytes = 0;
  let dropped = 0;
  for (const [device, counter] of counters) {
    devices[device] = { ...counter };
    onDisk += counter.depth;
    diskBytes += counter.bytes;
    dropped += counter.dropped;
  }
  return { devices, onDisk, diskBytes, dropped };
}

/** A device's counters, created at zero on first use. */
export function counterIn(counters: Map<string, OutboxDeviceStats>, device: string): OutboxDeviceStats {
  let counter = counters.get(device);
  if (!counter) {
    counter = { depth: 0, bytes: 0, dropped: 0 };
    counters.set(device, counter);
  }
  return counter;
}

export interface CapDrops {
  device: DropTally;
  total: DropTally;
}

export function noDrops(): CapDrops {
  return { device: new Map(), total: new Map() };
}

/**
 * Both caps over the disk rows (inside the caller's transaction), the per-device one first.
 * `heldElsewhere`: a device's bytes kept outside the disk (memory-first's memory), counted in the total.
 */
export function enforceCaps(store: OutboxStore, counters: Map<string, OutboxDeviceStats>, touched: ReadonlySet<string>, caps: { maxBytesPerDevice?: number; maxBytesTotal?: number }, heldElsewhere?: (device: string) => number): CapDrops {
  const drops = noDrops();
  const perDevice = caps.maxBytesPerDevice;
  if (perDevice !== undefined) {
    for (const device of touched) merge(drops.device, dropOldestOfDevice(store, counterIn(counters, device), device, perDevice));
  }
  if (caps.maxBytesTotal !== undefined) merge(drops.total, dropFairOverall(store, counters, caps.maxBytesTotal, heldElsewhere));
  return drops;
}

export function reportCapDrops(drops: CapDrops, listeners: DropListeners): void {
  reportDrops(drops.device, 'device-cap', listeners);
  reportDrops(drops.total, 'total-cap', listeners);
}

/** The payload as bytes, or undefined (dropped and counted) when it alone exceeds the device cap. */
export function admit(device: string, payload: Buffer | string, maxBytesPerDevice: number | undefined, counters: Map<string, OutboxDeviceStats>, listeners: DropListeners): Buffer | undefined {
  const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload;
  if (maxBytesPerDevice === undefined || bytes.length <= maxBytesPerDevice) return bytes;
  counterIn(counters, device).dropped += 1;
  reportDrops(new Map([[device, { records: 1, bytes: bytes.length }]]), 'record-too-large', listeners);
  return undefined;
}

function merge(into: DropTally, from: DropTally): void {
  for (const [device, entry] of from) tally(into, device, entry.records, entry.bytes);
}

/**
 * Memory-first's memory over a cap after an append to `device`: the device's own oldest beyond
 * its cap; beyond the total, fairly (the device holding the most, `onDisk` included, loses first).
 * Memory alone is held to the total: the disk's share is enforced at each write, and while the
 * file takes no writes memory is all there is.
 */
export function capMemory(memory: MemoryQueue, device: string, caps: { maxBytesPerDevice?: number; maxBytesTotal?: number }, onDisk: (device: string) => number): CapDrops {
  const drops = noDrops();
  const excess = caps.maxBytesPerDevice === undefined ? 0 : memory.deviceBytes(device) - caps.maxBytesPerDevice;
  if (excess > 0) {
    const gone = memory.dropOldestOf(device, excess);
    tally(drops.device, device, gone.records, gone.bytes);
  }
  const total = caps.maxBytesTotal;
  if (total !== undefined && memory.bytes > total) {
    for (const [d, gone] of memory.dropFairly(memory.bytes - total, onDisk)) tally(drops.total, d, gone.records, gone.bytes);
  }
  return drops;
}

/** Everything memory holds dropped (a last write that failed), counted per device; the tally to report. */
export function dropAllMemory(memory: MemoryQueue, counters: Map<string, OutboxDeviceStats>): DropTally {
  const lost: DropTally = new Map();
  for (const device of memory.devices()) {
    const gone = memory.dropOldestOf(device, Infinity);
    tally(lost, device, gone.records, gone.bytes);
    counterIn(counters, device).dropped += gone.records;
  }
  return lost;
}

/**
 * At open: the dropped counters the file kept (already counting what a salvage lost), and those
 * losses reported. `add`: a file taken up late (outbox-attach.ts), whose counts join this run's.
 */
export function restoreDropped(counters: Map<string, OutboxDeviceStats>, opened: { dropped: ReadonlyMap<string, number>; lost: DropTally; rejected: DropTally }, listeners: DropListeners, add = false): void {
  for (const [device, n] of opened.dropped) {
    const counter = counterIn(counters, device);
    counter.dropped = add ? counter.dropped + n : n;
  }
  reportDrops(opened.lost, 'file-lost', listeners);
  reportDrops(opened.rejected, 'checksum', listeners);
}

