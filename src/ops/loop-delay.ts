// Event-loop delay sampled coarsely: one timer every `periodMs`, each firing records how much later
// than due it ran. A loop blocked for longer than the period is always seen (the timer waits for
// it); a shorter block is seen when it covers a due instant. Node's monitorEventLoopDelay records
// the whole interval (period + delay) instead, which reads ~1 s on an idle box at a 1 s period.
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { asMono, repeatEvery, type Time } from '../core/time.js';

export interface LoopDelaySummary {
  /** Samples since the last reset. */
  count: number;
  /** Seconds late; NaN without samples (never a sentinel such as 2^63 ns). */
  min: number;
  max: number;
  mean: number;
  stddev: number;
  p50: number;
  p90: number;
  p99: number;
}

/** The summary without samples. */
export const NO_LOOP_DELAY: LoopDelaySummary = { count: 0, min: Number.NaN, max: Number.NaN, mean: Number.NaN, stddev: Number.NaN, p50: Number.NaN, p90: Number.NaN, p99: Number.NaN };

export class LoopDelaySampler {
  private readonly histogram: RecordableHistogram = createHistogram();
  private readonly stop: () => void;

  /** `time.now()` in ms; fractional (performance.now) keeps sub-millisecond delays. */
  constructor(time: Time, private readonly periodMs: number) {
    let due = time.now() + periodMs;
    this.stop = repeatEvery(time, periodMs, () => {
      const now = time.now();
      // The histogram holds integers >= 1: nanoseconds late, 1 ns for "on time".
      this.histogram.record(Math.max(1, Math.round((now - due) * 1e6)));
      due = now + this.periodMs;
    }, { unref: true });
  }

  /** What was recorded since the last reset, in seconds. */
  summary(): LoopDelaySummary {
    const h = this.histogram;
    if (h.count === 0) return NO_LOOP_DELAY;
    const s = (ns: number) => ns / 1e9;
    return { count: h.count, min: s(h.min), max: s(h.max), mean: s(h.mean), stddev: s(h.stddev), p50: s(h.percentile(50)), p90: s(h.percentile(90)), p99: s(h.percentile(99)) };
  }

  reset(): void {
    this.histogram.reset();
  }

  close(): void {
    this.stop();
  }
}

/** Monotonic milliseconds with sub-millisecond resolution (its own origin: only differences count), on real timers. */
export function monotonicTime(setTimer: Time['setTimer']): Time {
  return { now: () => asMono(performance.now()), setTimer };
}
