// Fixed-window request limiter for interface A; limits can change at run time ("dynamic").
import type { CloudClock } from '../clock.js';

export interface RateLimitConfig {
  /** Requests allowed per window. */
  limit: number;
  /** Window length in seconds. */
  windowS: number;
}

export interface RateDecision {
  allowed: boolean;
  headers: Record<string, string>;
}

export const DEFAULT_RATE_LIMIT: RateLimitConfig = { limit: 600, windowS: 60 };

export function checkRateLimit(config: RateLimitConfig): string | undefined {
  if (!Number.isInteger(config.limit) || config.limit < 1) return 'rate limit must be an integer of at least 1';
  if (!Number.isFinite(config.windowS) || config.windowS <= 0) return 'rate window must be a positive number of seconds';
  return undefined;
}

/** One window for the whole project, aligned to multiples of the window length since the epoch. */
export class RateLimiter {
  private windowIndex = -1;
  private used = 0;

  constructor(
    private config: RateLimitConfig,
    private readonly clock: CloudClock,
  ) {
    const problem = checkRateLimit(config);
    if (problem) throw new RangeError(problem);
  }

  get current(): RateLimitConfig {
    return { ...this.config };
  }

  /** New rules start a fresh window. */
  set(config: RateLimitConfig): void {
    const problem = checkRateLimit(config);
    if (problem) throw new RangeError(problem);
    this.config = { ...config };
    this.windowIndex = -1;
    this.used = 0;
  }

  take(): RateDecision {
    const now = this.clock.now();
    const windowMs = this.config.windowS * 1000;
    const index = Math.floor(now / windowMs);
    if (index !== this.windowIndex) {
      this.windowIndex = index;
      this.used = 0;
    }
    const resetMs = (index + 1) * windowMs;
    const allowed = this.used < this.config.limit;
    if (allowed) this.used += 1;
    const headers: Record<string, string> = {
      'X-RateLimit-Limit': String(this.config.limit),
      'X-RateLimit-Remaining': String(Math.max(0, this.config.limit - this.used)),
      'X-RateLimit-Reset': String(Math.ceil(resetMs / 1000)),
    };
    if (!allowed) headers['Retry-After'] = String(Math.max(1, Math.ceil((resetMs - now) / 1000)));
    return { allowed, headers };
  }
}
