// untilQuiet with a scripted monotonic clock: it resolves only once the clock says the silence has
// passed, however early its timers fire, and bytes arriving meanwhile extend the wait.
import { describe, expect, it } from 'vitest';
import { hrClock, preciseSleep, untilQuiet } from '../../../src/field/modbus/line-silence.js';

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

  it('with the real clock and sleeps (timer + usleep off the loop), never resolves before the silence', async () => {
    for (const silenceMs of [0.3, 0.9, 1.75, 2.9, 3.5, 6]) {
      for (let i = 0; i < 8; i += 1) {
        const since = hrClock();
        await untilQuiet(() => since, silenceMs);
        expect(hrClock() - since).toBeGreaterThanOrEqual(silenceMs);
      }
    }
  });

  it('passes every sleep it needs the remaining time, until the clock says the silence passed', async () => {
    const asked: number[] = [];
    let t = 0;
    const sleep = (ms: number, done: () => void) => {
      asked.push(ms);
      t += ms / 2; // every sleep ends at half of what it was asked: early, again and again
      setImmediate(done);
      return () => undefined;
    };
    await untilQuiet(() => 0, 4, () => t, sleep);
    expect(t).toBeGreaterThanOrEqual(4 - 1e-9);
    expect(asked[0]).toBe(4);
    expect(asked.every((ms, i) => i === 0 || ms < (asked[i - 1] as number))).toBe(true);
  });
});

describe('preciseSleep', () => {
  it.each([0.2, 1, 2.5, 4, 10])('a sleep of %f ms that is canceled never calls back', async (ms) => {
    let called = false;
    const cancel = preciseSleep(ms, () => { called = true; });
    cancel();
    await new Promise((resolve) => setTimeout(resolve, ms + 20));
    expect(called).toBe(false);
  });

  it.each([0.2, 1, 2.5, 4, 10])('a sleep of %f ms calls back once', async (ms) => {
    let calls = 0;
    await new Promise<void>((resolve) => { preciseSleep(ms, () => { calls += 1; resolve(); }); });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls).toBe(1);
  });
});
