// Time and timers as collaborators, so the bus and the poller run deterministically under test fakes.

export interface Clock {
  /** Milliseconds since the epoch (or any monotonic origin the caller chooses). */
  now(): number;
}

export interface Timers {
  /** Runs cb once after ms; returns a function that cancels it. */
  setTimer(cb: () => void, ms: number): () => void;
}

export const systemClock: Clock = { now: () => Date.now() };

export const systemTimers: Timers = {
  setTimer(cb, ms) {
    const handle = setTimeout(cb, Math.max(0, ms));
    return () => clearTimeout(handle);
  },
};

/** Resolves after ms on the given timers (used for short back-offs inside a transaction). */
export function sleep(timers: Timers, ms: number): Promise<void> {
  return new Promise((resolve) => {
    timers.setTimer(resolve, ms);
  });
}
