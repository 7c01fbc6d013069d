// Finds points of one device that share registers (or coils) in the same table; O(n log n).
import type { Table } from '../points/types.js';
import { widthOf } from '../points/types.js';
import type { PointConfig } from './site-types.js';

/** Point `index` collides with the earlier point `other`. */
export interface Overlap {
  index: number;
  other: number;
}

interface Span {
  index: number;
  start: number;
  end: number;
}

export function findOverlaps(points: readonly (PointConfig | undefined)[]): Overlap[] {
  const overlaps: Overlap[] = [];
  const byTable = new Map<Table, Span[]>();
  // Bit points on one register share it legitimately; the first one stands for the register.
  const bitOwners = new Map<string, Map<number, number>>();
  points.forEach((point, index) => {
    if (!point) return;
    if (point.type === 'bit') {
      const key = `${point.table}:${point.address}`;
      const owners = bitOwners.get(key);
      if (owners) {
        const same = owners.get(point.bit);
        if (same !== undefined) overlaps.push({ index, other: same });
        else owners.set(point.bit, index);
        return;
      }
      bitOwners.set(key, new Map([[point.bit, index]]));
    }
    const spans = byTable.get(point.table) ?? [];
    spans.push({ index, start: point.address, end: point.address + widthOf(point.type, point.length) });
    byTable.set(point.table, spans);
  });
  for (const spans of byTable.values()) {
    spans.sort((a, b) => a.start - b.start || a.index - b.index);
    let reach: Span | undefined;
    for (const span of spans) {
      if (reach && span.start < reach.end) {
        overlaps.push({ index: Math.max(span.index, reach.index), other: Math.min(span.index, reach.index) });
      }
      if (!reach || span.end > reach.end) reach = span;
    }
  }
  return overlaps.sort((a, b) => a.index - b.index || a.other - b.other);
}
