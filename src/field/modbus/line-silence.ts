// The inter-frame silence of an RTU line, kept on a monotonic sub-millisecond clock without
// spinning. Node's timers count whole milliseconds of a loop clock that lags: a 1.75 ms timer
// fires after 1 ms or after 2-3 ms. So a timer only covers the part of the wait above a few
// milliseconds, and the rest is slept off the event loop (usleep on a thread of libuv's pool
// through koffi, about 0.1 ms late). Every wake-up checks the clock again: nothing is sent
// before the line has been quiet for the full silence, however early a sleep ends. (Sleeping on
// this thread with Atomics.wait was tried: on a loaded machine it came back tens of milliseconds
// late, stalling the loop.)
import { libc } from '../../os/libc.js';

/** Monotonic clock in milliseconds with sub-millisecond resolution. */
export type HrClock = () => number;

export const hrClock: HrClock = () => performance.now();

/** Sleeps about `ms` (may end early or late), then calls `done`; the result cancels it. */
export type Sleep = (ms: number, done: () => void) => () => void;

/** Waits longer than this use a timer down to it; shorter ones the fine sleep. */
const FINE_SLEEP_MAX_MS = 3;

const timerSleep: Sleep = (ms, done) => {
  const timer = setTimeout(done, ms);
  return () => clearTimeout(timer);
};

/** The pool's threads may all be busy (a DNS lookup that hangs, a slow disk): a timer this much
 * after the target ends a fine sleep regardless, so the line keeps its pace. */
const FINE_SLEEP_BACKUP_MS = 2;

let sleepMicros: ((micros: number, done: () => void) => void) | null | undefined;

function usleepOffLoop(): typeof sleepMicros {
  if (sleepMicros === undefined) {
    try {
      sleepMicros = libc().sleepMicros;
    } catch {
      sleepMicros = null; // koffi does not load here: timers alone (coarser, still never early)
    }
  }
  return sleepMicros;
}

/** usleep on a thread of libuv's pool, with a timer as backstop; whichever ends first wins. */
const fineSleep: Sleep = (ms, done) => {
  const usleep = usleepOffLoop();
  if (!usleep) return timerSleep(ms, done);
  let pending = true;
  const finish = (): void => {
    if (!pending) return;
    pending = false;
    clearTimeout(backup);
    done();
  };
  const backup = setTimeout(finish, Math.ceil(ms) + FINE_SLEEP_BACKUP_MS);
  try {
    usleep(ms * 1000, finish);
  } catch {
    // koffi's queue of asynchronous calls is full: the timer alone
  }
  return () => {
    pending = false;
    clearTimeout(backup);
  };
};

/**
 * Sleeps about `ms` without spinning: a timer for all but the last few milliseconds, the fine
 * sleep for the rest. Ends within about 0.1 ms of the target, may end a little early (callers
 * that must not be early check their clock and sleep again).
 */
export const preciseSleep: Sleep = (ms, done) => {
  if (ms > FINE_SLEEP_MAX_MS) return timerSleep(ms - FINE_SLEEP_MAX_MS + 1, done);
  return fineSleep(ms, done);
};

/**
 * Undefined when the line has already been quiet for `silenceMs` (the caller goes on in the same
 * callback, no timer); otherwise a promise that resolves once it has. `quietSince` is read again
 * at every check, so bytes that arrive meanwhile extend the wait.
 */
export function untilQuiet(quietSince: () => number, silenceMs: number, now: HrClock = hrClock,
  sleep: Sleep = preciseSleep): Promise<void> | undefined {
  if (quietSince() + silenceMs - now() <= 0) return undefined;
  return new Promise<void>((resolve) => {
    const check = (): void => {
      const remaining = quietSince() + silenceMs - now();
      if (remaining <= 0) resolve();
      else sleep(remaining, check);
    };
    check();
  });
}
