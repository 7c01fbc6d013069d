// untilQuiet with a scripted monotonic clock: it resolves only once the clock says the silence has
// passed, however early its timers fire, and bytes arriving meanwhile extend the wait.
import { describe, expect, it } from 'vitest';
import { untilQuiet } from '../../../src/field/modbus/line-silence.js';

/** A clock that returns the scripted readings in turn (the last one repeats), recording each read. */
function scripted(readings: number[]): { now: () => number; reads: number[] } {
  const reads: number[] = [];
  let i = 0;
  return {
    reads,
    now: () => {
      const value = readings[Math.min(i, readings.length - 1)] as number;
      i += 1;
      reads.push(value);
      return value;
    },
  };
}

describe('untilQuiet', () => {
  it('goes on at once (no promise, no timer) when the silence has already passed', () => {
    const clock = scripted([10]);
    expect(untilQuiet(() => 5, 1.75, clock.now)).toBeUndefined();
  });

  it('timers that fire early never end the wait early: it checks again and waits on', async () => {
    // Reads: at the start, at the first timer (fired early, 1.25 ms left), at the second (still
    // 0.55 ms left), at the third (0.05 ms past the silence).
    const clock = scripted([0, 0, 0.5, 1.2, 1.8]);
    const wait = untilQuiet(() => 0, 1.75, clock.now);
    expect(wait).toBeInstanceOf(Promise);
    await wait;
    expect(clock.reads.at(-1)).toBeGreaterThanOrEqual(1.75);
    expect(clock.reads.slice(0, -1).every((t) => t < 1.75)).toBe(true);
  });

  it('bytes that arrive during the wait restart the silence', async () => {
    let lastByte = 0;
    const clock = scripted([0, 1.0, 1.9, 2.5, 2.9, 3.2]);
    const wait = untilQuiet(() => lastByte, 1.75, clock.now);
    lastByte = 1.4; // a byte at 1.4 ms: quiet only from 3.15 ms on
    await wait;
    expect(clock.reads.at(-1)).toBeGreaterThanOrEqual(3.15);
  });
});
