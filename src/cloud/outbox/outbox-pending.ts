// Write-ahead's appends waiting for a commit while the file takes no writes (pure): kept within
// a record and a byte cap, dropping fairly (the device holding the most loses its oldest first).

export interface Pending {
  /** Given at append, kept on disk: a record has one seq from append to ack. */
  seq: number;
  device: string;
  ts: number;
  payload: Buffer;
}

/** A device's pending records with seq > afterSeq, oldest first, at most `limit`. */
export function pendingOf(pending: readonly Pending[], device: string, afterSeq: number, limit: number): Pending[] {
  const out: Pending[] = [];
  for (const p of pending) {
    if (out.length >= limit) break;
    if (p.device === device && p.seq > afterSeq) out.push(p);
  }
  return out;
}

/**
 * Splits `pending` (in append order) into what stays and what is dropped so that at most
 * `maxRecords` and `maxBytes` (counting `heldOnDisk` per device) stay; each record costs its
 * payload plus `overheadBytes` (what it takes in memory beyond the payload).
 */
export function trimPendingFairly(pending: readonly Pending[], maxRecords: number, maxBytes: number, heldOnDisk: (device: string) => number, overheadBytes = 0): { kept: Pending[]; lost: Pending[] } {
  const cost = (p: Pending) => p.payload.length + overheadBytes;
  let bytes = 0;
  const byDevice = new Map<string, { records: Pending[]; bytes: number }>();
  for (const p of pending) {
    bytes += cost(p);
    const entry = byDevice.get(p.device) ?? { records: [], bytes: heldOnDisk(p.device) };
    entry.records.push(p);
    entry.bytes += cost(p);
    byDevice.set(p.device, entry);
  }
  let records = pending.length;
  if (records <= maxRecords && bytes <= maxBytes) return { kept: [...pending], lost: [] };
  const lost = new Set<Pending>();
  while (records > maxRecords || bytes > maxBytes) {
    let largest: { records: Pending[]; bytes: number } | undefined;
    for (const entry of byDevice.values()) {
      if (entry.records.length > 0 && (largest === undefined || entry.bytes > largest.bytes)) largest = entry;
    }
    const oldest = largest?.records.shift();
    if (!largest || !oldest) break;
    largest.bytes -= cost(oldest);
    bytes -= cost(oldest);
    records -= 1;
    lost.add(oldest);
  }
  return { kept: pending.filter((p) => !lost.has(p)), lost: pending.filter((p) => lost.has(p)) };
}
