// Aggregation: every time range, window and function against hand-computed answers.
import { describe, expect, it } from 'vitest';
import {
  FUNCTIONS, TIME_RANGES, WINDOWS, aggregate, applyFunction, resolveTimeRange, windowSeconds, windowStart,
  type AggregateFunction, type TimeRangeName, type WindowName,
} from '../../../packages/emulator/src/aggregate.js';

// Wednesday 2026-06-17 15:30:00 UTC
const NOW = Date.UTC(2026, 5, 17, 15, 30, 0);
const M = 60_000;
const H = 60 * M;
const D = 24 * H;

describe('resolveTimeRange', () => {
  const cases: [TimeRangeName, number, number][] = [
    ['last_5m', NOW - 5 * M, NOW], ['last_15m', NOW - 15 * M, NOW], ['last_30m', NOW - 30 * M, NOW],
    ['last_1h', NOW - H, NOW], ['last_3h', NOW - 3 * H, NOW], ['last_6h', NOW - 6 * H, NOW],
    ['last_12h', NOW - 12 * H, NOW], ['last_1d', NOW - D, NOW], ['last_3d', NOW - 3 * D, NOW],
    ['last_7d', NOW - 7 * D, NOW], ['last_15d', NOW - 15 * D, NOW], ['last_30d', NOW - 30 * D, NOW],
    ['last_60d', NOW - 60 * D, NOW], ['last_90d', NOW - 90 * D, NOW],
    ['last_6mo', Date.UTC(2025, 11, 17, 15, 30), NOW], ['last_1y', Date.UTC(2025, 5, 17, 15, 30), NOW],
    ['today', Date.UTC(2026, 5, 17), NOW], ['yday', Date.UTC(2026, 5, 16), Date.UTC(2026, 5, 17) - 1],
    ['this_week', Date.UTC(2026, 5, 15), NOW], ['prev_week', Date.UTC(2026, 5, 8), Date.UTC(2026, 5, 15) - 1],
    ['this_month', Date.UTC(2026, 5, 1), NOW], ['prev_month', Date.UTC(2026, 4, 1), Date.UTC(2026, 5, 1) - 1],
    ['this_year', Date.UTC(2026, 0, 1), NOW],
  ];
  it.each(cases)('%s', (name, start, end) => {
    expect(resolveTimeRange(name, NOW)).toEqual({ start, end });
  });

  it('covers all 24 names, custom included', () => {
    expect(TIME_RANGES).toHaveLength(24);
    expect(cases.map((c) => c[0]).sort()).toEqual(TIME_RANGES.filter((n) => n !== 'custom').sort());
    expect(resolveTimeRange('custom', NOW, { start: 5, end: 9 })).toEqual({ start: 5, end: 9 });
    expect(() => resolveTimeRange('custom', NOW)).toThrow(RangeError);
  });

  it('prev_month across a year boundary and this_week on a Monday/Sunday', () => {
    expect(resolveTimeRange('prev_month', Date.UTC(2026, 0, 10))).toEqual({ start: Date.UTC(2025, 11, 1), end: Date.UTC(2026, 0, 1) - 1 });
    expect(resolveTimeRange('this_week', Date.UTC(2026, 5, 15, 0, 0, 1)).start).toBe(Date.UTC(2026, 5, 15));
    expect(resolveTimeRange('this_week', Date.UTC(2026, 5, 21, 23)).start).toBe(Date.UTC(2026, 5, 15));
  });
});

describe('windows', () => {
  const TS = Date.UTC(2026, 5, 17, 15, 47, 31);
  const cases: [WindowName, number, number][] = [
    ['1m', Date.UTC(2026, 5, 17, 15, 47), 60], ['2m', Date.UTC(2026, 5, 17, 15, 46), 120],
    ['5m', Date.UTC(2026, 5, 17, 15, 45), 300], ['10m', Date.UTC(2026, 5, 17, 15, 40), 600],
    ['30m', Date.UTC(2026, 5, 17, 15, 30), 1800], ['1h', Date.UTC(2026, 5, 17, 15), 3600],
    ['3h', Date.UTC(2026, 5, 17, 15), 10800], ['6h', Date.UTC(2026, 5, 17, 12), 21600],
    ['1d', Date.UTC(2026, 5, 17), 86400], ['7d', Date.UTC(2026, 5, 11), 604800], // epoch-aligned: Thursdays
    ['1mo', Date.UTC(2026, 5, 1), 2592000],
  ];
  it.each(cases)('%s starts at the aligned boundary', (w, start, seconds) => {
    expect(windowStart(w, TS)).toBe(start);
    expect(windowSeconds(w)).toBe(seconds);
  });
  it('covers all 11 windows', () => {
    expect(cases.map((c) => c[0])).toEqual([...WINDOWS]);
  });
});

describe('functions', () => {
  const values = [4, 1, 7, 2]; // arrival order
  const cases: [AggregateFunction, number][] = [
    ['avg', 3.5], ['max', 7], ['min', 1], ['median', 3], ['first', 4], ['last', 2], ['count', 4], ['spread', 6], ['sum', 14],
  ];
  it.each(cases)('%s of [4,1,7,2]', (fn, expected) => {
    expect(applyFunction(fn, values)).toBe(expected);
  });
  it('covers all 9 functions; median of an odd count is the middle value', () => {
    expect(cases.map((c) => c[0])).toEqual([...FUNCTIONS]);
    expect(applyFunction('median', [9, 1, 5])).toBe(5);
  });
});

describe('aggregate', () => {
  const points = [
    { ts: NOW - 90 * M, value: 10 }, { ts: NOW - 70 * M, value: 20 }, // 14:00 window
    { ts: NOW - 20 * M, value: 1 }, { ts: NOW - 10 * M, value: 3 }, // 15:00 window
    { ts: NOW + M, value: 100 }, // after the range
  ];
  it('groups by window, keeps only windows with data, ignores points outside the range', () => {
    expect(aggregate(points, { start: NOW - 2 * H, end: NOW }, '1h', 'sum')).toEqual([
      { timestamp: '2026-06-17T14:00:00.000Z', ts: Date.UTC(2026, 5, 17, 14), value: 30 },
      { timestamp: '2026-06-17T15:00:00.000Z', ts: Date.UTC(2026, 5, 17, 15), value: 4 },
    ]);
    expect(aggregate(points, { start: NOW - 30 * M, end: NOW }, '1d', 'avg')).toEqual([
      { timestamp: '2026-06-17T00:00:00.000Z', ts: Date.UTC(2026, 5, 17), value: 2 },
    ]);
    expect(aggregate([], { start: 0, end: NOW }, '1m', 'count')).toEqual([]);
  });
});
