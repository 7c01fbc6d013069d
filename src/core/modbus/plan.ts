// Read planner (pure): coalesce a device's points into the fewest Modbus read requests.
import type { DeviceLimits, PointConfig } from '../config/site-types.js';
import { isBitTable, TABLES, widthOf, type Table } from '../points/types.js';

/** Protocol ceilings: FC3/FC4 read at most 125 registers, FC1/FC2 at most 2000 bits. */
export const MAX_REGISTERS_PER_READ = 125;
export const MAX_BITS_PER_READ = 2000;

export interface ReadRequest {
  table: Table;
  start: number;
  /** Registers (holding/input) or bits (coil/discrete). */
  count: number;
  /** Points whose every register lies inside [start, start + count), in address order. */
  points: PointConfig[];
}

/**
 * Learned boundaries per table: no request holds both a point starting below a cut and one
 * starting at or above it (a device refused such a request).
 */
export type ReadCuts = ReadonlyMap<Table, ReadonlySet<number>>;

/** What a device taught the poller: cuts, and per table a maximum request length below the limits. */
export interface LearnedReadLimits {
  cuts?: ReadCuts;
  maxCount?: ReadonlyMap<Table, number>;
}

export interface PlanSummary {
  requests: number;
  /** Registers read from holding and input tables, bridged gaps included. */
  registers: number;
  /** Bits read from coil and discrete tables, bridged gaps included. */
  bits: number;
  points: number;
}

/** Registers (or bits) a point occupies in its table. */
export function pointWidth(point: PointConfig): number {
  return isBitTable(point.table) ? 1 : widthOf(point.type, point.length);
}

/**
 * Plan the reads for one device. Requests stay within the device's limits (capped at the
 * protocol ceilings), bridge unused gaps of at most `limits.maxGap`, never cross one of the
 * learned cuts (or a learned shorter length), and never split a point.
 * Throws an Error for a point wider than the limit (config validation reports it first).
 *
 * Why one greedy pass gives the fewest requests: within a table, sort points by start address.
 * The lowest point must be covered by some request, and that request may as well start exactly
 * at it (starting lower only wastes span). Extending it over the following points while both the
 * span limit and the gap limit hold is always safe: (1) a gap that is too wide can never be
 * bridged by any later point, because later points start at or after the gap's end, so no request
 * can contain points on both sides of it (a cut acts the same way); (2) a point that breaks the span limit ends past the
 * window, and any later point that would still have fitted lies entirely inside that point's own
 * registers, so the next request (which starts at that point) covers it at no cost. Hence the
 * greedy request covers everything an optimal first request could, and by induction the greedy
 * plan never uses more requests than an optimal one ("greedy stays ahead"). A brute-force check
 * in the tests confirms this on random small cases. Cost: O(n log n) for the sort, O(n) after.
 */
export function planReads(points: readonly PointConfig[], limits: DeviceLimits, learned: LearnedReadLimits = {}): ReadRequest[] {
  const registerLimit = checkedLimit('maxRegistersPerRead', limits.maxRegistersPerRead, MAX_REGISTERS_PER_READ);
  const bitLimit = checkedLimit('maxBitsPerRead', limits.maxBitsPerRead, MAX_BITS_PER_READ);
  if (!(Number.isInteger(limits.maxGap) && limits.maxGap >= 0)) {
    throw new Error(`maxGap must be a non-negative integer (got ${limits.maxGap})`);
  }

  const byTable = new Map<Table, PointConfig[]>();
  for (const point of points) {
    const list = byTable.get(point.table);
    if (list) list.push(point);
    else byTable.set(point.table, [point]);
  }

  const requests: ReadRequest[] = [];
  for (const table of TABLES) {
    const tablePoints = byTable.get(table);
    if (!tablePoints) continue;
    const limit = Math.min(isBitTable(table) ? bitLimit : registerLimit, learned.maxCount?.get(table) ?? Infinity);
    requests.push(...planTable(table, tablePoints, limit, limits.maxGap, learned.cuts?.get(table)));
  }
  return requests;
}

function planTable(table: Table, points: PointConfig[], limit: number, maxGap: number, tableCuts: ReadonlySet<number> | undefined): ReadRequest[] {
  const unit = isBitTable(table) ? 'bit' : 'register';
  const sorted = points
    .map((point) => ({ point, start: point.address, end: point.address + pointWidth(point) }))
    .sort((a, b) => a.start - b.start || b.end - a.end);

  const requests: ReadRequest[] = [];
  let current: ReadRequest | undefined;
  let currentEnd = 0; // exclusive end of the registers the current request's points cover
  let nextCut = Infinity; // the first cut above the current request's start
  for (const { point, start, end } of sorted) {
    if (end - start > limit) {
      throw new Error(
        `point "${point.id}" (${table} ${start}, ${end - start} ${unit}s) is wider than the ` +
          `${limit}-${unit} read limit`,
      );
    }
    const fits = current !== undefined && start < nextCut && start - currentEnd <= maxGap && Math.max(end, currentEnd) - current.start <= limit;
    if (current && fits) {
      current.points.push(point);
      currentEnd = Math.max(currentEnd, end);
      current.count = currentEnd - current.start;
      continue;
    }
    current = { table, start, count: end - start, points: [point] };
    currentEnd = end;
    nextCut = firstAbove(tableCuts, start);
    requests.push(current);
  }
  return requests;
}

function firstAbove(cuts: ReadonlySet<number> | undefined, address: number): number {
  let first = Infinity;
  if (cuts) for (const cut of cuts) if (cut > address && cut < first) first = cut;
  return first;
}

/**
 * Halves a request between its points (the points of each half re-spanned), for bisecting a
 * refused request; undefined for a request of one point (or of points sharing one start), which
 * cannot be split. The second half starts at the returned `cut`.
 */
export function splitRequest(request: ReadRequest): { left: ReadRequest; right: ReadRequest; cut: number } | undefined {
  const starts = [...new Set(request.points.map((p) => p.address))];
  if (starts.length < 2) return undefined;
  const cut = starts[Math.floor(starts.length / 2)]!;
  const span = (points: PointConfig[]): ReadRequest => {
    const start = points[0]!.address;
    const end = Math.max(...points.map((p) => p.address + pointWidth(p)));
    return { table: request.table, start, count: end - start, points };
  };
  return {
    left: span(request.points.filter((p) => p.address < cut)),
    right: span(request.points.filter((p) => p.address >= cut)),
    cut,
  };
}

function checkedLimit(name: string, configured: number, ceiling: number): number {
  if (!(Number.isInteger(configured) && configured >= 1)) {
    throw new Error(`${name} must be a positive integer (got ${configured})`);
  }
  return Math.min(configured, ceiling);
}

/** Totals for "N requests cover M registers for K points"; bits are counted apart from registers. */
export function summarisePlan(requests: readonly ReadRequest[]): PlanSummary {
  const summary: PlanSummary = { requests: requests.length, registers: 0, bits: 0, points: 0 };
  for (const request of requests) {
    if (isBitTable(request.table)) summary.bits += request.count;
    else summary.registers += request.count;
    summary.points += request.points.length;
  }
  return summary;
}

/** One line for `fieldgate validate`: "3 requests cover 130 registers and 16 bits for 20 points". */
export function formatPlanSummary(summary: PlanSummary): string {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const parts: string[] = [];
  if (summary.registers > 0 || summary.bits === 0) parts.push(plural(summary.registers, 'register'));
  if (summary.bits > 0) parts.push(plural(summary.bits, 'bit'));
  const verb = summary.requests === 1 ? 'covers' : 'cover';
  return `${plural(summary.requests, 'request')} ${verb} ${parts.join(' and ')} for ${plural(summary.points, 'point')}`;
}

/** Learned cuts, plus both ends of every isolated point (read alone): no request may span one. */
export function cutsAround(cuts: ReadonlyMap<Table, ReadonlySet<number>>, isolated: readonly PointConfig[]): Map<Table, Set<number>> {
  const all = new Map<Table, Set<number>>();
  for (const [table, set] of cuts) all.set(table, new Set(set));
  for (const point of isolated) {
    const set = all.get(point.table) ?? new Set<number>();
    set.add(point.address);
    set.add(point.address + pointWidth(point));
    all.set(point.table, set);
  }
  return all;
}

/** A point's own read. */
export function singleRead(point: PointConfig): ReadRequest {
  return { table: point.table, start: point.address, count: pointWidth(point), points: [point] };
}
