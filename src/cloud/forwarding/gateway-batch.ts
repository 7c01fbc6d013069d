// Packing sub-device reports into one `gateway/attributes` message (pure). A batch holds at most
// one report per device (JSON would keep only the last of a repeated address, and a device's
// next report must not overtake this one), and stays under a byte bound unless a single report
// is larger than the bound on its own: that one goes alone rather than never.

/** The oldest unsent report of one device. */
export interface BatchCandidate {
  device: string;
  address: string;
  seq: number;
  /** The report: a JSON object's text. */
  payload: Buffer;
}

export interface Batch {
  /** What the message carries, in the order it carries it. */
  entries: BatchCandidate[];
  payload: Buffer;
}

const OPEN = Buffer.from('{');
const CLOSE = Buffer.from('}');
const COMMA = Buffer.from(',');

/**
 * Takes candidates in the given order (the caller rotates it for fairness) while they fit;
 * a candidate that does not fit is left for a later batch and smaller ones after it still go.
 */
export function packBatch(candidates: readonly BatchCandidate[], maxBytes: number): Batch {
  const entries: BatchCandidate[] = [];
  const parts: Buffer[] = [OPEN];
  let size = 2;
  const seen = new Set<string>();
  for (const candidate of candidates) {
    if (seen.has(candidate.device) || seen.has(`\u0000${candidate.address}`)) continue;
    const key = Buffer.from(`${JSON.stringify(candidate.address)}:`);
    // `"<addr>":<report>`, after a comma unless first.
    const added = key.length + candidate.payload.length + (entries.length > 0 ? 1 : 0);
    const fits = size + added <= maxBytes;
    if (!fits && entries.length > 0) continue;
    if (entries.length > 0) parts.push(COMMA);
    parts.push(key, candidate.payload);
    size += added;
    entries.push(candidate);
    seen.add(candidate.device);
    seen.add(`\u0000${candidate.address}`);
    // Oversized alone: nothing else joins it.
    if (!fits) break;
  }
  parts.push(CLOSE);
  return { entries, payload: Buffer.concat(parts, size) };
}
