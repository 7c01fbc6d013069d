import { describe, expect, it } from 'vitest';
import type { DeviceLimits, PointConfig } from '../../../src/core/config/site-types.js';
import {
  formatPlanSummary, planReads, pointWidth, summarisePlan, type ReadRequest,
} from '../../../src/core/modbus/plan.js';
import type { Table, ValueType } from '../../../src/core/points/types.js';
import { makePoint } from '../points/make-point.js';

const LIMITS: DeviceLimits = { maxRegistersPerRead: 125, maxBitsPerRead: 2000, maxGap: 0, forceMultiWrite: false };

/** Shorthand: 'h100:int32' = holding 100 int32; 'c5' = coil 5 bool; 's10x3' = holding string of 3. */
function pts(...specs: string[]): PointConfig[] {
  const tables: Record<string, Table> = { h: 'holding', i: 'input', c: 'coil', d: 'discrete' };
  return specs.map((spec, n) => {
    const m = /^([hicd])(\d+)(?::(\w+))?(?:x(\d+))?$/.exec(spec);
    if (!m) throw new Error(`bad spec ${spec}`);
    const table = tables[m[1]];
    const bitTable = table === 'coil' || table === 'discrete';
    const type = (m[3] ?? (bitTable ? 'bool' : m[4] ? 'string' : 'uint16')) as ValueType;
    return makePoint({ id: `${spec}#${n}`, table, address: Number(m[2]), type, length: Number(m[4] ?? 1) });
  });
}

/** Compact form of a plan: 'holding 0+10 [ids]'. */
function shape(requests: ReadRequest[]): string[] {
  return requests.map((r) => `${r.table} ${r.start}+${r.count} ${r.points.length}`);
}

describe('planReads', () => {
  it.each([
    { name: 'adjacent registers merge', points: pts('h0', 'h1', 'h2:int32'), limits: {}, plan: ['holding 0+4 3'] },
    { name: 'a gap is not bridged with maxGap 0', points: pts('h0', 'h2'), limits: {}, plan: ['holding 0+1 1', 'holding 2+1 1'] },
    { name: 'a gap within maxGap is bridged', points: pts('h0', 'h5'), limits: { maxGap: 4 }, plan: ['holding 0+6 2'] },
    { name: 'a gap one beyond maxGap is not', points: pts('h0', 'h6'), limits: { maxGap: 4 }, plan: ['holding 0+1 1', 'holding 6+1 1'] },
    { name: 'unsorted input is sorted', points: pts('h9', 'h3', 'h7', 'h5'), limits: { maxGap: 1 }, plan: ['holding 3+7 4'] },
    { name: 'duplicate addresses share one request', points: pts('h4', 'h4:int16', 'h4:int32'), limits: {}, plan: ['holding 4+2 3'] },
    { name: 'a point inside a wider one', points: pts('h10:float64', 'h11'), limits: {}, plan: ['holding 10+4 2'] },
    { name: '125 registers in one request', points: pts('h0x100', 'h100x25'), limits: {}, plan: ['holding 0+125 2'] },
    { name: '126 registers need two', points: pts('h0x100', 'h100x26'), limits: {}, plan: ['holding 0+100 1', 'holding 100+26 1'] },
    { name: 'device limits above 125 are capped', points: pts('h0x125', 'h125'), limits: { maxRegistersPerRead: 500 }, plan: ['holding 0+125 1', 'holding 125+1 1'] },
    { name: 'smaller device limits apply', points: pts('h0', 'h1', 'h2', 'h3', 'h4'), limits: { maxRegistersPerRead: 2 }, plan: ['holding 0+2 2', 'holding 2+2 2', 'holding 4+1 1'] },
    { name: 'a point is never split across the limit', points: pts('h0', 'h1', 'h2:int32'), limits: { maxRegistersPerRead: 3 }, plan: ['holding 0+2 2', 'holding 2+2 1'] },
    { name: 'tables are planned apart, in table order', points: pts('i0', 'h0', 'c0', 'd0', 'h1'), limits: {}, plan: ['coil 0+1 1', 'discrete 0+1 1', 'holding 0+2 2', 'input 0+1 1'] },
    { name: 'bit tables use the 2000-bit limit', points: [...pts('c0'), ...pts('c1999'), ...pts('c2000')], limits: { maxGap: 5000 }, plan: ['coil 0+2000 2', 'coil 2000+1 1'] },
    { name: 'bit tables use the device bit limit', points: pts('d0', 'd1', 'd2'), limits: { maxBitsPerRead: 2 }, plan: ['discrete 0+2 2', 'discrete 2+1 1'] },
    { name: 'bool and bit points in registers are one register', points: [...pts('h0:bool'), makePoint({ id: 'b', address: 1, type: 'bit', bit: 15 })], limits: {}, plan: ['holding 0+2 2'] },
    { name: 'the gap is measured from the widest earlier point', points: pts('h0:float64', 'h1', 'h6'), limits: { maxGap: 2 }, plan: ['holding 0+7 3'] },
    { name: 'no points, no requests', points: [], limits: {}, plan: [] },
  ])('$name', ({ points, limits, plan }) => {
    expect(shape(planReads(points, { ...LIMITS, ...limits }))).toEqual(plan);
  });

  it('keeps points in address order inside each request', () => {
    const [request] = planReads(pts('h3', 'h1', 'h2', 'h0'), LIMITS);
    expect(request.points.map((p) => p.address)).toEqual([0, 1, 2, 3]);
  });

  it.each([
    { points: pts('h0x126'), limits: {}, error: 'point "h0x126#0" (holding 0, 126 registers) is wider than the 125-register read limit' },
    { points: pts('h0:float64'), limits: { maxRegistersPerRead: 2 }, error: /wider than the 2-register read limit/ },
    { points: pts('h0'), limits: { maxRegistersPerRead: 0 }, error: 'maxRegistersPerRead must be a positive integer (got 0)' },
    { points: pts('c0'), limits: { maxBitsPerRead: 1.5 }, error: 'maxBitsPerRead must be a positive integer (got 1.5)' },
    { points: pts('h0'), limits: { maxGap: -1 }, error: 'maxGap must be a non-negative integer (got -1)' },
  ])('throws: $error', ({ points, limits, error }) => {
    expect(() => planReads(points, { ...LIMITS, ...limits })).toThrow(error);
  });
});

describe('summarisePlan', () => {
  it('counts registers and bits apart', () => {
    const plan = planReads([...pts('h0', 'h1', 'h5:int32', 'i0x10'), ...pts('c0', 'c7', 'd3')], { ...LIMITS, maxGap: 8 });
    const summary = summarisePlan(plan);
    expect(summary).toEqual({ requests: 4, registers: 7 + 10, bits: 8 + 1, points: 7 });
    expect(formatPlanSummary(summary)).toBe('4 requests cover 17 registers and 9 bits for 7 points');
  });

  it.each([
    { summary: { requests: 1, registers: 1, bits: 0, points: 1 }, text: '1 request covers 1 register for 1 point' },
    { summary: { requests: 0, registers: 0, bits: 0, points: 0 }, text: '0 requests cover 0 registers for 0 points' },
    { summary: { requests: 2, registers: 0, bits: 20, points: 3 }, text: '2 requests cover 20 bits for 3 points' },
  ])('formats $text', ({ summary, text }) => {
    expect(formatPlanSummary(summary)).toBe(text);
  });
});

// --- property-style checks on random point sets -------------------------------------------

/** Deterministic PRNG so a failure is reproducible from its seed. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const RANDOM_TYPES: ValueType[] = ['uint16', 'int32', 'float64', 'string', 'bool', 'bit'];

function randomPoints(random: () => number, count: number, span: number, maxWidth: number): PointConfig[] {
  const tables: Table[] = ['holding', 'input', 'coil', 'discrete'];
  return Array.from({ length: count }, (_, n) => {
    const table = tables[Math.floor(random() * tables.length)];
    const type = table === 'coil' || table === 'discrete' ? 'bool' : RANDOM_TYPES[Math.floor(random() * RANDOM_TYPES.length)];
    const length = 1 + Math.floor(random() * maxWidth);
    return makePoint({ id: `p${n}`, table, type, length, address: Math.floor(random() * span) });
  });
}

/**
 * Fewest requests by trying every partition (only for a handful of points). Points are placed in
 * address order so a group that is already infeasible can be pruned: a later point never fills
 * an earlier gap nor shrinks the span.
 */
function bruteForceMinimum(unsorted: PointConfig[], limit: number, maxGap: number): number {
  const points = [...unsorted].sort((a, b) => a.address - b.address);
  const feasible = (group: PointConfig[]): boolean => {
    const spans = group.map((p) => [p.address, p.address + pointWidth(p)]).sort((a, b) => a[0] - b[0]);
    const start = spans[0][0];
    let end = spans[0][1];
    for (const [s, e] of spans) {
      if (s - end > maxGap) return false;
      end = Math.max(end, e);
    }
    return end - start <= limit;
  };
  let best = Number.POSITIVE_INFINITY;
  const groups: PointConfig[][] = [];
  const place = (i: number): void => {
    if (groups.length >= best) return;
    if (i === points.length) {
      best = groups.length;
      return;
    }
    for (const group of groups) {
      group.push(points[i]);
      if (feasible(group)) place(i + 1);
      group.pop();
    }
    groups.push([points[i]]);
    place(i + 1);
    groups.pop();
  };
  place(0);
  return best;
}

describe('planReads on random point sets', () => {
  it('covers every point by exactly one request and never exceeds a limit', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const random = mulberry32(seed);
      const limits: DeviceLimits = {
        maxRegistersPerRead: 4 + Math.floor(random() * 140),
        maxBitsPerRead: 1 + Math.floor(random() * 2100),
        maxGap: Math.floor(random() * 12),
        forceMultiWrite: false,
      };
      const points = randomPoints(random, Math.floor(random() * 60), 400, 4);
      const plan = planReads(points, limits);
      const seen = new Map<PointConfig, number>();
      for (const request of plan) {
        const limit = request.table === 'coil' || request.table === 'discrete'
          ? Math.min(limits.maxBitsPerRead, 2000) : Math.min(limits.maxRegistersPerRead, 125);
        expect(request.count, `seed ${seed}`).toBeLessThanOrEqual(limit);
        for (const point of request.points) {
          expect(point.table).toBe(request.table);
          expect(point.address).toBeGreaterThanOrEqual(request.start);
          expect(point.address + pointWidth(point)).toBeLessThanOrEqual(request.start + request.count);
          seen.set(point, (seen.get(point) ?? 0) + 1);
        }
      }
      expect(seen.size, `seed ${seed}`).toBe(points.length);
      expect([...seen.values()].every((n) => n === 1), `seed ${seed}`).toBe(true);
    }
  });

  it('uses no more requests than a brute-force optimum', () => {
    for (let seed = 1; seed <= 400; seed++) {
      const random = mulberry32(seed * 7919);
      const limit = 2 + Math.floor(random() * 8);
      const maxGap = Math.floor(random() * 3);
      const points = randomPoints(random, 1 + Math.floor(random() * 7), 14, 3)
        .map((p) => makePoint({ ...p, table: 'holding', type: 'string', length: Math.min(p.length, limit) }));
      const greedy = planReads(points, { ...LIMITS, maxRegistersPerRead: limit, maxGap }).length;
      expect(greedy, `seed ${seed}: ${points.map((p) => `${p.address}+${p.length}`).join(' ')}`)
        .toBe(bruteForceMinimum(points, limit, maxGap));
    }
  });
});
