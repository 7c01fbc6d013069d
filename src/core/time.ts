// The clock and timer abstraction: everything that reads the time or waits gets one of these, so
// tests drive time by hand (test/helpers/manual-clock.ts) instead of sleeping for real.
//
// Two kinds of time, kept apart by their types. A Pi has no clock chip: NTP steps its wall clock by
// hours or days at boot and back again later, so nothing that waits or measures may read it.
// - MonoMs: the monotonic clock (any origin, never stepped). Every schedule, age, deadline, timeout,
//   rate limit, cool-down, guard, backoff, watchdog and in-memory expiry.
// - EpochMs: the wall clock (Unix ms). Only timestamps that leave the process: a report's `ts`, a
//   time shown to a person, a time written to disk that a later process reads.

declare const monotonicBrand: unique symbol;
declare const epochBrand: unique symbol;
/** Milliseconds on the monotonic clock; only differences between two of them mean anything. */
export type MonoMs = number & { readonly [monotonicBrand]: true };
/** Milliseconds since the Unix epoch, on the wall clock (stepped by NTP). */
export type EpochMs = number & { readonly [epochBrand]: true };

/** The monotonic clock. */
export interface Clock {
  /** Monotonic milliseconds (not the epoch): for schedules, ages and deadlines only. */
  now(): MonoMs;
}

/** The wall clock, for timestamps that leave the process. */
export interface WallClock {
  /** Unix milliseconds; may step in either direction at any time. */
  wallNow(): EpochMs;
}

/** A number known to be monotonic milliseconds (a computed deadline, a test's fixed instant). */
export function asMono(ms: number): MonoMs {
  return ms as MonoMs;
}

/** A number known to be Unix milliseconds (read from disk or the wire, or a test's fixed instant). */
export function asEpoch(ms: number): EpochMs {
  return ms as EpochMs;
}

export interface TimerOptions {
  /** The timer does not keep the process alive (housekeeping, not work in progress). */
  unref?: boolean;
}

export interface Timers {
  /** Runs cb once after ms; returns a function that cancels it (a no-op once it ran). */
  setTimer(cb: () => void, ms: number, options?: TimerOptions): () => void;
}

/** Both halves, for components that read the (monotonic) time and wait. */
export interface Time extends Clock, Timers {}

/** Time and the wall clock, for components that also stamp what leaves the process. */
export interface TimeWithWall extends Time, WallClock {}

/**
 * Runs `cb` once the event loop has read the I/O that already waits; returns a cancel. After a
 * stall (a busy box), expired timers run before the poll phase reads bytes that arrived meanwhile,
 * so a quiet timer alone would end a message at a silence that was the process's, not the line's;
 * setImmediate runs after the poll phase, where such a byte re-arms the quiet and cancels this.
 */
export function afterPendingIo(cb: () => void): () => void {
  const handle = setImmediate(cb);
  return () => clearImmediate(handle);
}

/**
 * The monotonic origin: performance.now() (CLOCK_MONOTONIC on Linux, like libuv's timers) counts
 * from the process start, so it is shifted by a fixed 10^9 ms. A value of 0 used as "never" then
 * still lies far in the past, and a monotonic value taken for the epoch by mistake reads as
 * January 1970, which no test or person mistakes for now. Whole milliseconds, as Date.now() gave
 * them: every duration logged or shown stays an integer (the line silence and the event-loop
 * sampler read their own sub-millisecond clocks).
 */
const MONOTONIC_OFFSET_MS = 1e9;

export const systemClock: Clock = { now: () => (Math.floor(performance.now()) + MONOTONIC_OFFSET_MS) as MonoMs };

export const systemWallClock: WallClock = { wallNow: () => Date.now() as EpochMs };

export const systemTimers: Timers = {
  setTimer(cb, ms, options) {
    const handle = setTimeout(cb, Math.max(0, ms));
    if (options?.unref) handle.unref();
    return () => clearTimeout(handle);
  },
};

export const systemTime: TimeWithWall = { now: systemClock.now, setTimer: systemTimers.setTimer, wallNow: systemWallClock.wallNow };

/** Resolves after ms on the given timers; rejects with the signal's reason when it aborts first. */
export function sleep(timers: Timers, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      cancel();
      reject(signal?.reason);
    };
    const cancel = timers.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Runs cb every ms (the first time after ms) until the returned function is called; like setInterval. */
export function repeatEvery(timers: Timers, ms: number, cb: () => void, options?: TimerOptions): () => void {
  let stopped = false;
  let cancel = (): void => undefined;
  const arm = (): void => {
    cancel = timers.setTimer(() => {
      if (stopped) return;
      arm();
      cb();
    }, ms, options);
  };
  arm();
  return () => {
    stopped = true;
    cancel();
  };
}
