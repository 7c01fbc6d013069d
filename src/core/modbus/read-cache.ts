// Pure memory of a bus's latest successful reads, for a share's `cacheMs`: a read is answered from
// it only when one remembered block of that unit and table covers every register or bit asked and
// is young enough; the answer is exactly the raw words or bits that were read. A write through the
// bus forgets every block it touches, so nobody reads back an old value from memory.
import type { Table } from '../points/types.js';

export interface CachedBlock {
  unit: number;
  table: Table;
  start: number;
  words?: Uint16Array;
  bits?: readonly boolean[];
  /** Epoch ms of the reply. */
  at: number;
}

export const DEFAULT_CACHE_BLOCKS = 1024;

export class ReadCache {
  /** Insertion order is age order: the oldest is dropped beyond `maxBlocks`. */
  private readonly blocks = new Map<string, CachedBlock>();

  constructor(private readonly maxBlocks = DEFAULT_CACHE_BLOCKS) {}

  get size(): number {
    return this.blocks.size;
  }

  record(block: CachedBlock): void {
    const length = block.words?.length ?? block.bits?.length ?? 0;
    if (length === 0) return;
    const key = `${block.unit}:${block.table}:${block.start}:${length}`;
    this.blocks.delete(key);
    this.blocks.set(key, block);
    if (this.blocks.size > this.maxBlocks) this.blocks.delete(this.blocks.keys().next().value as string);
  }

  /** Forgets every block of `unit` (every unit: a broadcast wrote to all) and `table` that holds any of first..last. */
  forget(unit: number | 'every', table: Table, first: number, last: number): void {
    for (const [key, block] of this.blocks) {
      const end = block.start + (block.words?.length ?? block.bits?.length ?? 0) - 1;
      if ((unit === 'every' || block.unit === unit) && block.table === table && block.start <= last && first <= end) this.blocks.delete(key);
    }
  }

  /** The words or bits of start..start+count-1 from one block younger than `maxAgeMs`, or undefined. */
  lookup(unit: number, table: Table, start: number, count: number, now: number, maxAgeMs: number): { words?: Uint16Array; bits?: boolean[] } | undefined {
    let best: CachedBlock | undefined;
    for (const block of this.blocks.values()) {
      if (block.unit !== unit || block.table !== table || now - block.at >= maxAgeMs || block.start > start) continue;
      const length = block.words?.length ?? block.bits?.length ?? 0;
      if (block.start + length < start + count) continue;
      if (!best || block.at > best.at) best = block;
    }
    if (!best) return undefined;
    const from = start - best.start;
    return best.words ? { words: best.words.slice(from, from + count) } : { bits: (best.bits ?? []).slice(from, from + count) };
  }
}
