// Durations in the site file: a number of milliseconds, or a string such as "500ms", "2s", "1.5m", "1h".
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const DURATION = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/;

/** Milliseconds, or undefined when the value is not a duration. */
export function parseDurationMs(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = DURATION.exec(value);
  if (!match) return undefined;
  // Rounded to microseconds so "1.1s" is 1100, not 1100.0000000000002.
  return Math.round(Number(match[1]) * UNIT_MS[match[2] ?? 'ms'] * 1000) / 1000;
}
