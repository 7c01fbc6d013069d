import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../helpers/manual-clock.js';
import { RateLimiter, checkRateLimit } from '../../../packages/emulator/src/http/rate-limit.js';

describe('RateLimiter', () => {
  it('counts down within an epoch-aligned window and resets at its end', () => {
    const clock = new ManualClock(100_500);
    const limiter = new RateLimiter({ limit: 2, windowS: 10 }, clock);
    expect(limiter.take()).toEqual({ allowed: true, headers: { 'X-RateLimit-Limit': '2', 'X-RateLimit-Remaining': '1', 'X-RateLimit-Reset': '110' } });
    expect(limiter.take().headers['X-RateLimit-Remaining']).toBe('0');
    const refused = limiter.take();
    expect(refused.allowed).toBe(false);
    expect(refused.headers['Retry-After']).toBe('10');
    clock.set(109_999);
    expect(limiter.take().headers['Retry-After']).toBe('1');
    clock.set(110_000);
    expect(limiter.take()).toMatchObject({ allowed: true, headers: { 'X-RateLimit-Remaining': '1', 'X-RateLimit-Reset': '120' } });
  });

  it('applies new rules at once, with a fresh window', () => {
    const clock = new ManualClock(0);
    const limiter = new RateLimiter({ limit: 1, windowS: 1 }, clock);
    limiter.take();
    expect(limiter.take().allowed).toBe(false);
    limiter.set({ limit: 5, windowS: 2 });
    expect(limiter.take().headers).toMatchObject({ 'X-RateLimit-Limit': '5', 'X-RateLimit-Remaining': '4' });
    expect(limiter.current).toEqual({ limit: 5, windowS: 2 });
  });

  it.each([
    [{ limit: 0, windowS: 1 }], [{ limit: 1.5, windowS: 1 }], [{ limit: 1, windowS: 0 }], [{ limit: 1, windowS: Number.NaN }],
  ])('refuses %j', (config) => {
    expect(checkRateLimit(config)).toBeTypeOf('string');
    expect(() => new RateLimiter(config, new ManualClock(0))).toThrow(RangeError);
  });
});
