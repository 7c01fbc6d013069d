// Real timers: jobs run in order and never before their target (no upper bound is asserted).
import { describe, expect, it } from 'vitest';
import { PreciseQueue, hrtimeMicros } from '../../../packages/simulator/src/precise-queue.js';
import { waitFor } from '../../helpers/wait.js';

describe('PreciseQueue', () => {
  it('runs jobs in push order, never early', async () => {
    const queue = new PreciseQueue();
    const base = hrtimeMicros();
    const targets = [5000, 1500, 12_000, 300, 0, 8000].map((d) => base + d);
    const ran: Array<{ index: number; at: number }> = [];
    targets.forEach((target, index) => queue.push(target, () => ran.push({ index, at: hrtimeMicros() })));
    await waitFor(() => ran.length === targets.length, { what: 'all jobs' });
    expect(ran.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5]);
    // A job pushed after a later one waits for it (replies on one line keep their order).
    let latestTarget = 0;
    ran.forEach(({ index, at }) => {
      latestTarget = Math.max(latestTarget, targets[index]);
      expect(at).toBeGreaterThanOrEqual(latestTarget);
    });
    queue.close();
  });

  it('keeps running after a job throws, and reports the error', async () => {
    const errors: unknown[] = [];
    const queue = new PreciseQueue(hrtimeMicros, (err) => errors.push(err));
    let ran = false;
    queue.push(hrtimeMicros() + 100, () => { throw new Error('boom'); });
    queue.push(hrtimeMicros() + 200, () => { ran = true; });
    await waitFor(() => ran, { what: 'second job' });
    expect(errors).toHaveLength(1);
    queue.close();
  });

  it('drops pending jobs on close', async () => {
    const queue = new PreciseQueue();
    let ran = false;
    queue.push(hrtimeMicros() + 20_000, () => { ran = true; });
    queue.close();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(ran).toBe(false);
    expect(queue.pending).toBe(0);
  });
});
