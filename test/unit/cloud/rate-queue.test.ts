import { describe, expect, it } from 'vitest';
import {
  CloudHttpError, NetworkError, QueueClosedError, RateLimitedError,
} from '../../../src/cloud/http/errors.js';
import { QueueFullError } from '../../../src/core/queue-full-error.js';
import { MAX_RESET_WAIT_MS, RateQueue, type RateQueueOptions } from '../../../src/cloud/http/rate-queue.js';
import { eventLoopTurns, ManualClock } from '../../helpers/manual-clock.js';

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function makeQueue(clock: ManualClock, options: Partial<RateQueueOptions> = {}): RateQueue {
  return new RateQueue({
    concurrency: 4,
    intervalCap: 1000,
    intervalMs: 1000,
    maxPending: 100,
    attempts: 3,
    backoff: { initialMs: 100, maxMs: 1000, jitter: 0 },
    max429Retries: 5,
    lowRemaining: 2,
    time: clock,
    random: () => clock.random(),
    ...options,
  });
}

describe('RateQueue', () => {
  it('runs at most `concurrency` requests at once', async () => {
    const clock = new ManualClock();
    const queue = makeQueue(clock, { concurrency: 2 });
    const gates = [deferred<number>(), deferred<number>(), deferred<number>()];
    let started = 0;
    const results = gates.map((gate) => queue.run({ run: () => { started += 1; return gate.promise; } }));
    await eventLoopTurns();
    expect(started).toBe(2);
    expect(queue.stats()).toMatchObject({ running: 2, pending: 1 });
    gates[0].resolve(0);
    await eventLoopTurns();
    expect(started).toBe(3);
    gates[1].resolve(1);
    gates[2].resolve(2);
    expect(await Promise.all(results)).toEqual([0, 1, 2]);
    expect(queue.stats()).toMatchObject({ running: 0, pending: 0 });
  });

  it('rejects requests beyond the pending cap with QueueFullError and counts them', async () => {
    const clock = new ManualClock();
    const queue = makeQueue(clock, { maxPending: 2, concurrency: 1 });
    const gate = deferred<string>();
    const a = queue.run({ run: () => gate.promise });
    const b = queue.run({ run: async () => 'b' });
    await expect(queue.run({ run: async () => 'c' })).rejects.toBeInstanceOf(QueueFullError);
    expect(queue.stats().rejected).toBe(1);
    gate.resolve('a');
    expect(await Promise.all([a, b])).toEqual(['a', 'b']);
    expect(await queue.run({ run: async () => 'd' })).toBe('d');
  });

  it('merges requests with the same key while one is outstanding', async () => {
    const clock = new ManualClock();
    const queue = makeQueue(clock);
    const gate = deferred<{ v: number }>();
    let calls = 0;
    const task = { key: 'attrs:dev1:a,b', run: () => { calls += 1; return gate.promise; } };
    const first = queue.run(task);
    const second = queue.run(task);
    expect(second).toBe(first);
    gate.resolve({ v: 1 });
    expect(await second).toEqual({ v: 1 });
    expect(calls).toBe(1);
    expect(queue.stats().merged).toBe(1);
    await queue.run({ ...task, run: async () => { calls += 1; return { v: 2 }; } });
    expect(calls).toBe(2);
  });

  it('starts nothing before Retry-After has passed after a 429', async () => {
    const clock = new ManualClock();
    const queue = makeQueue(clock);
    const starts: number[] = [];
    let limited = false;
    const first = queue.run({
      run: async () => {
        starts.push(clock.now());
        if (!limited) {
          limited = true;
          throw new RateLimitedError(5000, 'GET /x');
        }
        return 'ok';
      },
    });
    await eventLoopTurns();
    expect(clock.sleeping).toBe(1);
    const t0 = clock.now();
    const other = queue.run({ run: async () => { starts.push(clock.now()); return 'other'; } });
    await eventLoopTurns();
    expect(clock.sleeping).toBe(2);
    clock.advance(4999);
    await eventLoopTurns();
    expect(starts).toHaveLength(1);
    clock.advance(1);
    expect(await Promise.all([first, other])).toEqual(['ok', 'other']);
    expect(starts.slice(1).every((t) => t >= t0 + 5000)).toBe(true);
    expect(queue.stats()).toMatchObject({ rateLimited: 1 });
    expect(queue.stats().waits).toBeGreaterThanOrEqual(2);
  });

  it('gives up with RateLimitedError after too many 429s', async () => {
    const clock = new ManualClock();
    const queue = makeQueue(clock, { max429Retries: 0 });
    await expect(queue.run({ run: async () => { throw new RateLimitedError(10, 'GET /x'); } }))
      .rejects.toBeInstanceOf(RateLimitedError);
  });

  it.each([
    ['HTTP 503', () => new CloudHttpError(503, 'GET /x'), 3],
    ['network error', () => new NetworkError('GET /x', 'ECONNREFUSED'), 3],
    ['HTTP 400', () => new CloudHttpError(400, 'GET /x'), 1],
    ['HTTP 404', () => new CloudHttpError(404, 'GET /x'), 1],
    ['other error', () => new Error('bug'), 1],
  ])('retries %s with capped backoff only when worth it', async (_name, makeError, expectedCalls) => {
    const clock = new ManualClock();
    const queue = makeQueue(clock);
    let calls = 0;
    const result = queue.run({ run: async () => { calls += 1; throw makeError(); } });
    result.catch(() => undefined);
    for (let i = 0; i < 5; i += 1) {
      await eventLoopTurns();
      clock.advance(1000);
    }
    await expect(result).rejects.toThrow();
    expect(calls).toBe(expectedCalls);
    expect(queue.stats().retries).toBe(expectedCalls - 1);
  });

  it('returns the success after retried failures', async () => {
    const clock = new ManualClock();
    const queue = makeQueue(clock);
    let calls = 0;
    const result = queue.run({ run: async () => { calls += 1; if (calls < 3) throw new CloudHttpError(502, 'GET /x'); return calls; } });
    await eventLoopTurns();
    expect(clock.sleeping).toBe(1);
    clock.advance(100);
    await eventLoopTurns();
    expect(calls).toBe(2);
    await eventLoopTurns();
    expect(clock.sleeping).toBe(1);
    clock.advance(199);
    await eventLoopTurns();
    expect(calls).toBe(2);
    clock.advance(1);
    expect(await result).toBe(3);
  });

  it('spaces requests over the rest of the window when few remain', async () => {
    const clock = new ManualClock();
    const queue = makeQueue(clock, { lowRemaining: 2 });
    queue.observe({ remaining: 2, resetInMs: 10_000 });
    const starts: number[] = [];
    const tasks = [0, 1, 2].map(() => queue.run({ run: async () => { starts.push(clock.now()); } }));
    await eventLoopTurns();
    expect(starts.length).toBe(1);
    await eventLoopTurns();
    expect(clock.sleeping).toBe(2);
    clock.advance(5000);
    await eventLoopTurns();
    expect(starts.length).toBe(2);
    clock.advance(5000);
    await Promise.all(tasks);
    expect(starts[1] - starts[0]).toBeGreaterThanOrEqual(5000);
    expect(starts[2] - starts[1]).toBeGreaterThanOrEqual(5000);
  });

  it('waits at most an hour for a reset a wrong wall clock puts days away', async () => {
    const clock = new ManualClock();
    const queue = makeQueue(clock);
    queue.observe({ remaining: 0, resetInMs: 86_400_000 });
    let started = false;
    const task = queue.run({ run: async () => { started = true; } });
    await eventLoopTurns();
    clock.advance(MAX_RESET_WAIT_MS - 1);
    await eventLoopTurns();
    expect(started).toBe(false);
    clock.advance(1);
    await task;
    expect(started).toBe(true);
  });

  it('waits for the window reset when nothing remains, and relaxes when plenty remain', async () => {
    const clock = new ManualClock();
    const queue = makeQueue(clock);
    queue.observe({ remaining: 0, resetInMs: 3000 });
    let started = false;
    const task = queue.run({ run: async () => { started = true; } });
    await eventLoopTurns();
    expect(clock.sleeping).toBe(1);
    expect(started).toBe(false);
    clock.advance(3000);
    await task;
    queue.observe({ remaining: 50 });
    await queue.run({ run: async () => undefined });
    expect(clock.sleeping).toBe(0);
  });

  it('rejects everything with QueueClosedError on close and aborts running requests', async () => {
    const clock = new ManualClock();
    const queue = makeQueue(clock, { concurrency: 1 });
    let aborted = false;
    const running = queue.run({
      run: (signal) => new Promise((_res, rej) => signal.addEventListener('abort', () => { aborted = true; rej(new Error('aborted')); })),
    });
    const waiting = queue.run({ run: async () => 'never' });
    await eventLoopTurns();
    expect(queue.stats().running).toBe(1);
    queue.close();
    await expect(running).rejects.toBeInstanceOf(QueueClosedError);
    await expect(waiting).rejects.toBeInstanceOf(QueueClosedError);
    expect(aborted).toBe(true);
    await expect(queue.run({ run: async () => 1 })).rejects.toBeInstanceOf(QueueClosedError);
  });
});
