// Counting after the outbox file was replaced while running (outbox-file.ts): each device's
// counters set to what the fresh store holds, every row not carried over counted as lost.
import { reportDrops, tally, type DropTally } from './outbox-caps.js';
import type { MovedAside } from './outbox-startup.js';
import type { OutboxStore } from './outbox-store.js';
import type { DropListeners, OutboxDeviceStats } from '../../core/outbox-types.js';

/**
 * After every replacement (a salvage may say complete and still miss rows): each device's counters
 * set to what the new store holds (past `ackedThrough`), the difference counted as dropped
 * ('file-lost', with its bytes); then the moved-aside line, with what was carried and lost.
 */
export function recountAfterReplace(store: OutboxStore, counters: Map<string, OutboxDeviceStats>, ackedThrough: ReadonlyMap<string, number>, listeners: DropListeners & { onMovedAside?: (moved: MovedAside) => void }, movedAside: MovedAside | undefined): void {
  let lost: DropTally = new Map();
  try {
    lost = recountAfterLoss(store, counters, ackedThrough);
  } catch {
    // The fresh store cannot be read: counters stay; the next replacement recounts.
  }
  reportDrops(lost, 'file-lost', listeners);
  if (movedAside) listeners.onMovedAside?.({ ...movedAside, lost: [...lost.values()].reduce((n, e) => n + e.records, 0) });
}

/**
 * After a replacement: each device's counters set to what the new store holds (past
 * `ackedThrough`), the difference counted as dropped.
 */
export function recountAfterLoss(store: OutboxStore, counters: Map<string, OutboxDeviceStats>, ackedThrough: ReadonlyMap<string, number>): DropTally {
  const lost: DropTally = new Map();
  for (const [device, counter] of counters) {
    const held = store.measure(device, ackedThrough.get(device) ?? 0, Number.MAX_SAFE_INTEGER);
    const records = counter.depth - held.records;
    if (records > 0) tally(lost, device, records, Math.max(0, counter.bytes - held.bytes));
    counter.dropped += Math.max(0, records);
    counter.depth = held.records;
    counter.bytes = held.bytes;
  }
  return lost;
}
