// A removed device's queue dropped by the outbox itself (ReportOutbox.discard), not acknowledged
// unsent: an ack counts only what a peek handed out (outbox-reads.ts), and a drop must be counted
// as one. Its disk rows are counted at once and deleted by the next write, which also stores the
// dropped counter in the file (outbox_counts), so /status shows it after a restart too.
import { counterIn, reportDrops } from './outbox-caps.js';
import type { DropListeners, OutboxDeviceStats } from '../../core/outbox-types.js';

/**
 * Counts a device's disk rows (its counter) and `held` (what the caller took out of memory) as
 * dropped ('device-removed'); its rows up to `lastSeq` (every seq handed out so far) are deleted
 * at the next write. Returns how many.
 */
export function discardQueue(device: string, counters: Map<string, OutboxDeviceStats>, ackedOnDisk: Map<string, number>, lastSeq: number, held: { records: number; bytes: number }, listeners: DropListeners): number {
  const counter = counterIn(counters, device);
  const records = counter.depth + held.records;
  if (records === 0) return 0;
  const bytes = counter.bytes + held.bytes;
  if (counter.depth > 0) ackedOnDisk.set(device, lastSeq);
  counter.dropped += records;
  counter.depth = 0;
  counter.bytes = 0;
  reportDrops(new Map([[device, { records, bytes }]]), 'device-removed', listeners);
  return records;
}
