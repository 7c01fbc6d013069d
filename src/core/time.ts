// The one clock and timer abstraction: everything that reads the time or waits gets one of these,
// so tests drive time by hand (test/helpers/manual-clock.ts) instead of sleeping for real.

export interface Clock {
  /** Milliseconds since the epoch (or any monotonic origin the caller chooses). */
  now(): number;
}

export interface TimerOptions {
  /** The timer does not keep the process alive (housekeeping, not work in progress). */
  unref?: boolean;
}

export interface Timers {
  /** Runs cb once after ms; returns a function that cancels it (a no-op once it ran). */
  setTimer(cb: () => void, ms: number, options?: TimerOptions): () => void;
}

/** Both halves, for components that read the time and wait. */
export interface Time extends Clock, Timers {}

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

export const systemClock: Clock = { now: () => Date.now() };

export const systemTimers: Timers = {
  setTimer(cb, ms, options) {
    const handle = setTimeout(cb, Math.max(0, ms));
    if (options?.unref) handle.unref();
    return () => clearTimeout(handle);
  },
};

export const systemTime: Time = { now: systemClock.now, setTimer: systemTimers.setTimer };

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
