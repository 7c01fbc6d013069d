// One bounded, rate-aware queue for every interface A/B call (the only importer of p-queue).
// Limits: start rate, concurrency, outstanding requests. Obeys Retry-After and X-RateLimit-*.
import PQueue from 'p-queue';
import { backoffDelay } from '../../core/backoff.js';
import type { BackoffConfig } from '../../core/config/site-types.js';
import { QueueClosedError, RateLimitedError, isRetryable } from './errors.js';
import { QueueFullError } from '../../core/queue-full-error.js';
import { sleep, systemTime, type Time } from '../../core/time.js';

/**
 * A window reset further away than this is a wall clock that is off (a Pi not yet set by NTP, or
 * the cloud's), not a window: the queue waits at most this long for it.
 */
export const MAX_RESET_WAIT_MS = 3_600_000;

export interface RateInfo {
  limit?: number;
  remaining?: number;
  /** How long the current rate window still runs (ms, from the answer; 0 or less: over). */
  resetInMs?: number;
}

export interface RateQueueOptions {
  concurrency: number;
  /** At most intervalCap request starts per intervalMs. */
  intervalCap: number;
  intervalMs: number;
  /** Requests admitted and not yet settled; more are rejected with QueueFullError. */
  maxPending: number;
  /** Attempts in total for 5xx / network errors (1 = no retry). */
  attempts: number;
  backoff: BackoffConfig;
  /** How many 429 answers one request may meet before its RateLimitedError is returned. */
  max429Retries: number;
  /** Start spacing requests over the rest of the window when X-RateLimit-Remaining drops to this. */
  lowRemaining: number;
  time?: Time;
  /** Backoff jitter source; Math.random by default. */
  random?: () => number;
}

export interface QueueTask<T> {
  /** Same key while one is outstanding: the callers share its result (duplicate reads merged). */
  key?: string;
  run(signal: AbortSignal): Promise<T>;
}

export interface RateQueueStats {
  pending: number;
  running: number;
  rateLimited: number;
  waits: number;
  waitedMs: number;
  retries: number;
  merged: number;
  rejected: number;
}

export class RateQueue {
  private readonly queue: PQueue;
  private readonly clock: Time;
  private readonly random: () => number;
  private readonly abort = new AbortController();
  private readonly closing: Promise<never>;
  private readonly byKey = new Map<string, Promise<unknown>>();
  private outstanding = 0;
  private running = 0;
  /** No request starts before this instant (Retry-After, exhausted window). */
  private notBefore = 0;
  /** While now < spacingUntil, starts are at least spacingMs apart (low X-RateLimit-Remaining). */
  private spacingMs = 0;
  private spacingUntil = 0;
  private readonly counters = { rateLimited: 0, waits: 0, waitedMs: 0, retries: 0, merged: 0, rejected: 0 };

  constructor(private readonly options: RateQueueOptions) {
    this.clock = options.time ?? systemTime;
    this.random = options.random ?? Math.random;
    this.queue = new PQueue({
      concurrency: options.concurrency,
      intervalCap: options.intervalCap,
      interval: options.intervalMs,
    });
    this.closing = new Promise<never>((_resolve, reject) => {
      this.abort.signal.addEventListener('abort', () => reject(new QueueClosedError()), { once: true });
    });
    this.closing.catch(() => undefined);
  }

  run<T>(task: QueueTask<T>): Promise<T> {
    if (this.abort.signal.aborted) return Promise.reject(new QueueClosedError());
    if (task.key !== undefined) {
      const shared = this.byKey.get(task.key);
      if (shared) {
        this.counters.merged += 1;
        return shared as Promise<T>;
      }
    }
    if (this.outstanding >= this.options.maxPending) {
      this.counters.rejected += 1;
      return Promise.reject(new QueueFullError('cloud request', this.options.maxPending));
    }
    this.outstanding += 1;
    const execution = this.execute(task);
    execution.catch(() => undefined);
    const result = Promise.race([execution, this.closing]).finally(() => {
      this.outstanding -= 1;
      if (task.key !== undefined && this.byKey.get(task.key) === result) this.byKey.delete(task.key);
    });
    if (task.key !== undefined) this.byKey.set(task.key, result);
    return result;
  }

  /** Rate-limit headers of any answer: pace the rest of the window when few requests remain. */
  observe(info: RateInfo): void {
    const remaining = info.remaining;
    if (remaining === undefined || !Number.isFinite(remaining)) return;
    const now = this.clock.now();
    if (remaining > this.options.lowRemaining) {
      this.spacingMs = 0;
      return;
    }
    const resetAt = info.resetInMs !== undefined && info.resetInMs > 0 ? now + Math.min(info.resetInMs, MAX_RESET_WAIT_MS) : now + this.options.intervalMs;
    if (remaining <= 0) {
      this.notBefore = Math.max(this.notBefore, resetAt);
      this.spacingMs = 0;
    } else {
      this.spacingMs = Math.ceil((resetAt - now) / remaining);
      this.spacingUntil = resetAt;
    }
  }

  /** A 429 answer: nothing starts before Retry-After has passed. */
  pauseFor(ms: number): void {
    this.notBefore = Math.max(this.notBefore, this.clock.now() + Math.max(0, ms));
  }

  stats(): RateQueueStats {
    return { pending: this.outstanding - this.running, running: this.running, ...this.counters };
  }

  /** Cancel everything: running requests are aborted, waiting ones rejected with QueueClosedError. */
  close(): void {
    if (this.abort.signal.aborted) return;
    this.queue.clear();
    this.abort.abort();
    this.byKey.clear();
  }

  private async execute<T>(task: QueueTask<T>): Promise<T> {
    let failures = 0;
    let limited = 0;
    for (;;) {
      try {
        return await this.queue.add(() => this.attempt(task), { priority: failures + limited > 0 ? 1 : 0 });
      } catch (err) {
        if (this.abort.signal.aborted) throw new QueueClosedError();
        if (err instanceof RateLimitedError) {
          this.counters.rateLimited += 1;
          this.pauseFor(err.retryAfterMs);
          limited += 1;
          if (limited > this.options.max429Retries) throw err;
          continue;
        }
        failures += 1;
        if (!isRetryable(err) || failures >= this.options.attempts) throw err;
        this.counters.retries += 1;
        await this.sleep(backoffDelay(this.options.backoff, failures - 1, this.random));
      }
    }
  }

  private async attempt<T>(task: QueueTask<T>): Promise<T> {
    await this.gate();
    this.running += 1;
    try {
      return await task.run(this.abort.signal);
    } finally {
      this.running -= 1;
    }
  }

  /** Rejects with QueueClosedError when the queue closes first. */
  private async sleep(ms: number): Promise<void> {
    try {
      await sleep(this.clock, ms, this.abort.signal);
    } catch {
      throw new QueueClosedError();
    }
  }

  private async gate(): Promise<void> {
    for (;;) {
      if (this.abort.signal.aborted) throw new QueueClosedError();
      const wait = this.notBefore - this.clock.now();
      if (wait <= 0) break;
      this.counters.waits += 1;
      this.counters.waitedMs += wait;
      await this.sleep(wait);
    }
    const now = this.clock.now();
    if (this.spacingMs > 0 && now < this.spacingUntil) this.notBefore = now + this.spacingMs;
  }
}
