// The inter-frame silence of an RTU line, kept on a monotonic sub-millisecond clock without
// spinning: a timer for the wait, a re-check when it fires (Node's timers count whole milliseconds
// of a loop clock that may lag, so they fire up to a millisecond early at times) and a re-armed
// timer if the silence has not yet passed. Nothing is sent before the line has been quiet for the
// full silence. (Sleeping the sub-millisecond rest on the thread with Atomics.wait was tried: on a
// loaded machine the thread then came back tens of milliseconds late at times, stalling the loop.)

/** Monotonic clock in milliseconds with sub-millisecond resolution. */
export type HrClock = () => number;

export const hrClock: HrClock = () => performance.now();

/**
 * Undefined when the line has already been quiet for `silenceMs` (the caller goes on in the same
 * callback, no timer); otherwise a promise that resolves once it has. `quietSince` is read again
 * at every check, so bytes that arrive meanwhile extend the wait.
 */
export function untilQuiet(quietSince: () => number, silenceMs: number, now: HrClock = hrClock): Promise<void> | undefined {
  if (quietSince() + silenceMs - now() <= 0) return undefined;
  return new Promise<void>((resolve) => {
    const check = (): void => {
      const remaining = quietSince() + silenceMs - now();
      if (remaining <= 0) resolve();
      else setTimeout(check, remaining); // may fire early: checked again, never sent early
    };
    check();
  });
}
