// The inter-frame silence of an RTU line, kept to the sub-millisecond on a monotonic clock without
// spinning: a timer for the bulk of the wait (Node's timers count whole milliseconds and may fire
// a little early), a re-check when it fires, and the last fraction of a millisecond slept in
// Atomics.wait (the thread sleeps in the kernel; nothing spins). Nothing is sent before the line
// has been quiet for the full silence.

/** Monotonic clock in milliseconds with sub-millisecond resolution. */
export type HrClock = () => number;

export const hrClock: HrClock = () => performance.now();

/**
 * The longest remainder slept on the thread instead of re-armed as a timer: a re-armed timer
 * cannot wait less than 1 ms, so a 0.3 ms remainder would cost a whole millisecond of line time.
 */
export const MAX_THREAD_SLEEP_MS = 1;

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Sleeps the thread for `ms` (< MAX_THREAD_SLEEP_MS) without spinning. */
function threadSleep(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

/**
 * Undefined when the line has already been quiet for `silenceMs` (the caller goes on in the same
 * callback, no timer); otherwise a promise that resolves once it has. `quietSince` is read again
 * at every check, so bytes that arrive meanwhile extend the wait.
 */
export function untilQuiet(quietSince: () => number, silenceMs: number, now: HrClock = hrClock): Promise<void> | undefined {
  if (quietSince() + silenceMs - now() <= 0) return undefined;
  return new Promise<void>((resolve) => {
    const check = (fromTimer: boolean): void => {
      let remaining = quietSince() + silenceMs - now();
      if (remaining > 0 && fromTimer && remaining < MAX_THREAD_SLEEP_MS) {
        threadSleep(remaining);
        remaining = quietSince() + silenceMs - now();
      }
      if (remaining <= 0) resolve();
      else setTimeout(() => check(true), remaining); // may fire early: checked again, never sent early
    };
    check(false);
  });
}
