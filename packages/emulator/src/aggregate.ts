// Attribute aggregation (A6): time ranges, windows and functions. Pure; `now` is passed in. UTC.

export const TIME_RANGES = [
  'last_5m', 'last_15m', 'last_30m', 'last_1h', 'last_3h', 'last_6h', 'last_12h', 'last_1d', 'last_3d',
  'last_7d', 'last_15d', 'last_30d', 'last_60d', 'last_90d', 'last_6mo', 'last_1y', 'today', 'yday',
  'this_week', 'prev_week', 'this_month', 'prev_month', 'this_year', 'custom',
] as const;
export const WINDOWS = ['1m', '2m', '5m', '10m', '30m', '1h', '3h', '6h', '1d', '7d', '1mo'] as const;
export const FUNCTIONS = ['avg', 'max', 'min', 'median', 'first', 'last', 'count', 'spread', 'sum'] as const;

export type TimeRangeName = (typeof TIME_RANGES)[number];
export type WindowName = (typeof WINDOWS)[number];
export type AggregateFunction = (typeof FUNCTIONS)[number];

export interface TimeRange {
  start: number;
  /** Inclusive. */
  end: number;
}

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

const ROLLING_MS: Partial<Record<TimeRangeName, number>> = {
  last_5m: 5 * MIN, last_15m: 15 * MIN, last_30m: 30 * MIN, last_1h: HOUR, last_3h: 3 * HOUR,
  last_6h: 6 * HOUR, last_12h: 12 * HOUR, last_1d: DAY, last_3d: 3 * DAY, last_7d: 7 * DAY,
  last_15d: 15 * DAY, last_30d: 30 * DAY, last_60d: 60 * DAY, last_90d: 90 * DAY,
};

const WINDOW_MS: Record<Exclude<WindowName, '1mo'>, number> = {
  '1m': MIN, '2m': 2 * MIN, '5m': 5 * MIN, '10m': 10 * MIN, '30m': 30 * MIN, '1h': HOUR,
  '3h': 3 * HOUR, '6h': 6 * HOUR, '1d': DAY, '7d': 7 * DAY,
};

function dayStart(ms: number): number {
  return ms - (((ms % DAY) + DAY) % DAY);
}
/** Monday 00:00 UTC of the week holding `ms` (ISO weeks). */
function weekStart(ms: number): number {
  const day = dayStart(ms);
  const weekday = (new Date(day).getUTCDay() + 6) % 7;
  return day - weekday * DAY;
}
function monthStart(ms: number, offsetMonths = 0): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + offsetMonths, 1);
}
function minusMonths(ms: number, months: number): number {
  const d = new Date(ms);
  d.setUTCMonth(d.getUTCMonth() - months);
  return d.getTime();
}

/** The range a name stands for at `now`; `custom` takes start/end (validated by the caller). */
export function resolveTimeRange(name: TimeRangeName, now: number, custom?: TimeRange): TimeRange {
  const rolling = ROLLING_MS[name];
  if (rolling !== undefined) return { start: now - rolling, end: now };
  switch (name) {
    case 'last_6mo': return { start: minusMonths(now, 6), end: now };
    case 'last_1y': return { start: minusMonths(now, 12), end: now };
    case 'today': return { start: dayStart(now), end: now };
    case 'yday': return { start: dayStart(now) - DAY, end: dayStart(now) - 1 };
    case 'this_week': return { start: weekStart(now), end: now };
    case 'prev_week': return { start: weekStart(now) - 7 * DAY, end: weekStart(now) - 1 };
    case 'this_month': return { start: monthStart(now), end: now };
    case 'prev_month': return { start: monthStart(now, -1), end: monthStart(now) - 1 };
    case 'this_year': return { start: Date.UTC(new Date(now).getUTCFullYear(), 0, 1), end: now };
    case 'custom':
      if (!custom) throw new RangeError('custom time range needs start and end');
      return custom;
    default: throw new RangeError(`unknown time range ${name}`);
  }
}

/** Start of the window holding `ts`: fixed windows align to the Unix epoch, 1mo to calendar months. */
export function windowStart(window: WindowName, ts: number): number {
  if (window === '1mo') return monthStart(ts);
  const size = WINDOW_MS[window];
  return ts - (((ts % size) + size) % size);
}

export function windowSeconds(window: WindowName): number {
  return window === '1mo' ? 30 * 86_400 : WINDOW_MS[window] / 1000;
}

export function applyFunction(fn: AggregateFunction, values: number[]): number {
  switch (fn) {
    case 'avg': return values.reduce((a, b) => a + b, 0) / values.length;
    case 'sum': return values.reduce((a, b) => a + b, 0);
    case 'max': return Math.max(...values);
    case 'min': return Math.min(...values);
    case 'spread': return Math.max(...values) - Math.min(...values);
    case 'first': return values[0];
    case 'last': return values[values.length - 1];
    case 'count': return values.length;
    case 'median': {
      const sorted = [...values].sort((a, b) => a - b);
      const mid = Math.floor(sorted.length / 2);
      return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }
  }
}

export interface AggregatePoint {
  timestamp: string;
  ts: number;
  value: number;
}

/** Points (oldest first) within the range, grouped by window; only windows holding data appear. */
export function aggregate(
  points: { ts: number; value: number }[], range: TimeRange, window: WindowName, fn: AggregateFunction,
): AggregatePoint[] {
  const buckets = new Map<number, number[]>();
  for (const p of points) {
    if (p.ts < range.start || p.ts > range.end) continue;
    const key = windowStart(window, p.ts);
    const bucket = buckets.get(key) ?? [];
    bucket.push(p.value);
    buckets.set(key, bucket);
  }
  return [...buckets.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([ts, values]) => ({ timestamp: new Date(ts).toISOString(), ts, value: applyFunction(fn, values) }));
}
