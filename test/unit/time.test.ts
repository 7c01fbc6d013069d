// The one clock module: sleep and repeatEvery on fake time; the system timers on real ones.
import { describe, expect, it } from 'vitest';
import { repeatEvery, sleep, systemTime } from '../../src/core/time.js';
import { ManualClock } from '../helpers/manual-clock.js';

describe('sleep', () => {
  it('resolves only when its time has come', async () => {
    const clock = new ManualClock();
    let done = false;
    const slept = sleep(clock, 100).then(() => { done = true; });
    clock.advance(99);
    await Promise.resolve();
    expect(done).toBe(false);
    clock.advance(1);
    await slept;
    expect(done).toBe(true);
    expect(clock.delays).toEqual([100]);
  });

  it('rejects with the abort reason and leaves no timer behind', async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    const slept = sleep(clock, 1000, controller.signal);
    expect(clock.sleeping).toBe(1);
    controller.abort(new Error('closing'));
    await expect(slept).rejects.toThrow('closing');
    expect(clock.sleeping).toBe(0);
  });

  it('rejects at once when already aborted, setting no timer', async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    controller.abort(new Error('closed'));
    await expect(sleep(clock, 10, controller.signal)).rejects.toThrow('closed');
    expect(clock.delays).toEqual([]);
  });

  it('waits on the system timers too', async () => {
    const before = systemTime.now();
    await sleep(systemTime, 5);
    expect(systemTime.now()).toBeGreaterThanOrEqual(before);
  });
});

describe('repeatEvery', () => {
  it('runs once per period, never before the first period, and not after cancel', () => {
    const clock = new ManualClock();
    const runs: number[] = [];
    const cancel = repeatEvery(clock, 1000, () => runs.push(clock.now()));
    clock.advance(999);
    expect(runs).toEqual([]);
    clock.advance(1);
    clock.advance(2000);
    expect(runs.map((t) => t - 1_000_000)).toEqual([1000, 2000, 3000]);
    cancel();
    expect(clock.sleeping).toBe(0);
    clock.advance(10_000);
    expect(runs).toHaveLength(3);
  });

  it('stops when cancelled from inside its own callback', () => {
    const clock = new ManualClock();
    let runs = 0;
    const cancel = repeatEvery(clock, 10, () => {
      runs += 1;
      if (runs === 2) cancel();
    });
    clock.advance(100);
    expect(runs).toBe(2);
    expect(clock.sleeping).toBe(0);
  });
});

describe('ManualClock.advanceAsync', () => {
  it('settles what each timer starts at that instant, before a later timer is due', async () => {
    const clock = new ManualClock(0);
    const seen: string[] = [];
    // A chain of sleeps: each step sets the next timer only after an await, as async code does.
    const chain = (async () => {
      for (const step of [10, 10, 30]) {
        await sleep(clock, step);
        seen.push(`chain@${clock.now()}`);
      }
    })();
    clock.setTimer(() => seen.push(`timer@${clock.now()}`), 25);
    await clock.advanceAsync(49);
    expect(seen).toEqual(['chain@10', 'chain@20', 'timer@25']);
    expect(clock.now()).toBe(49);
    await clock.advanceAsync(1);
    await chain;
    expect(seen).toEqual(['chain@10', 'chain@20', 'timer@25', 'chain@50']);
    expect(clock.sleeping).toBe(0);
  });

  it('fires nothing not yet due, and a cancelled timer never', async () => {
    const clock = new ManualClock(0);
    const fired: number[] = [];
    clock.setTimer(() => fired.push(1), 5);
    const cancel = clock.setTimer(() => fired.push(2), 3);
    cancel();
    await clock.advanceAsync(4);
    expect(fired).toEqual([]);
    await clock.advanceAsync(1);
    expect(fired).toEqual([1]);
  });
});
