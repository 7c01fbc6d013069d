// Work done in steps (a generator yielding between devices), so a reader on the event loop can
// give other work turns in between; run straight through where nothing waits on it.

/** A validation that yields between devices; its result is the generator's return value. */
export type Steps<T> = Generator<void, T>;

/** Runs every step at once and returns the result. */
export function runSteps<T>(steps: Steps<T>): T {
  let step = steps.next();
  while (!step.done) step = steps.next();
  return step.value;
}
