// Dropping the oldest rows on disk when an outbox is over its byte caps (inside the caller's
// transaction). Memory-first callers count their memory bytes in `extraBytes`.
import type { OutboxStore } from './outbox-store.js';
import type { OutboxDeviceStats, OutboxDropInfo } from '../core/outbox-types.js';

export type DropTally = Map<string, { records: number; bytes: number }>;

export function tally(into: DropTally, device: string, records: number, bytes: number): void {
  const entry = into.get(device) ?? { records: 0, bytes: 0 };
  entry.records += records;
  entry.bytes += bytes;
  into.set(device, entry);
}

export function reportDrops(tallied: DropTally, reason: OutboxDropInfo['reason'], onDrop: ((info: OutboxDropInfo) => void) | undefined): void {
  for (const [device, entry] of tallied) onDrop?.({ device, ...entry, reason });
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

/** Deletes the globally oldest disk rows until all bytes (disk + extra) fit `cap`. */
export function dropOldestOverall(store: OutboxStore, counters: ReadonlyMap<string, OutboxDeviceStats>, counter: (device: string) => OutboxDeviceStats, cap: number, extraBytes = 0): DropTally {
  let total = extraBytes;
  for (const c of counters.values()) total += c.bytes;
  const dropped: DropTally = new Map();
  while (total > cap) {
    const oldest = store.oldestRows(256);
    if (oldest.length === 0) break;
    for (const row of oldest) {
      if (total <= cap) break;
      store.deleteOne(row.seq);
      const c = counter(row.device);
      c.bytes -= row.size;
      c.depth -= 1;
      c.dropped += 1;
      total -= row.size;
      tally(dropped, row.device, 1, row.size);
    }
  }
  return dropped;
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
 * `heldElsewhere`: bytes kept outside the disk (memory-first's memory), counted in the total.
 */
export function enforceCaps(store: OutboxStore, counters: Map<string, OutboxDeviceStats>, touched: ReadonlySet<string>, caps: { maxBytesPerDevice?: number; maxBytesTotal?: number }, heldElsewhere = 0): CapDrops {
  const drops = noDrops();
  const perDevice = caps.maxBytesPerDevice;
  if (perDevice !== undefined) {
    for (const device of touched) merge(drops.device, dropOldestOfDevice(store, counterIn(counters, device), device, perDevice));
  }
  if (caps.maxBytesTotal !== undefined) merge(drops.total, dropOldestOverall(store, counters, (d) => counterIn(counters, d), caps.maxBytesTotal, heldElsewhere));
  return drops;
}

export function reportCapDrops(drops: CapDrops, onDrop: ((info: OutboxDropInfo) => void) | undefined): void {
  reportDrops(drops.device, 'device-cap', onDrop);
  reportDrops(drops.total, 'total-cap', onDrop);
}

/** The payload as bytes, or undefined (dropped and counted) when it alone exceeds the device cap. */
export function admit(device: string, payload: Buffer | string, maxBytesPerDevice: number | undefined, counters: Map<string, OutboxDeviceStats>, onDrop: ((info: OutboxDropInfo) => void) | undefined): Buffer | undefined {
  const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload;
  if (maxBytesPerDevice === undefined || bytes.length <= maxBytesPerDevice) return bytes;
  counterIn(counters, device).dropped += 1;
  onDrop?.({ device, records: 1, bytes: bytes.length, reason: 'record-too-large' });
  return undefined;
}

function merge(into: DropTally, from: DropTally): void {
  for (const [device, entry] of from) tally(into, device, entry.records, entry.bytes);
}
