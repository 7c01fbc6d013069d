// Sessions: bounded, idle ones expire on use, and a flood of anonymous visits never logs anyone out.
import { describe, expect, it } from 'vitest';
import { LoginLimiter, MAX_SESSIONS, SessionStore } from '../../../src/ops/web/sessions.js';

describe('SessionStore', () => {
  it('ends a session unused for idleMs, keeps one in use', () => {
    const store = new SessionStore(1000);
    const a = store.create(true, 0);
    expect(store.get(a.id, 900)?.id).toBe(a.id);
    expect(store.get(a.id, 1800)?.id).toBe(a.id);
    expect(store.get(a.id, 2801)).toBeUndefined();
    expect(store.get('forged', 0)).toBeUndefined();
  });

  it('a flood of anonymous sessions evicts anonymous ones, not the logged-in engineer', () => {
    const store = new SessionStore(3_600_000);
    const engineer = store.create(true, 0);
    for (let i = 0; i < MAX_SESSIONS * 4; i++) store.create(false, i);
    expect(store.get(engineer.id, 10)?.authenticated).toBe(true);
  });
});

describe('LoginLimiter', () => {
  it('refuses after perMinute failures from one address, for that address only, until the minute has passed', () => {
    const limiter = new LoginLimiter(3);
    for (let i = 0; i < 3; i++) limiter.failed('10.0.0.9', i * 1000);
    expect(limiter.allowed('10.0.0.9', 3000)).toBe(false);
    expect(limiter.allowed('10.0.0.8', 3000)).toBe(true);
    expect(limiter.retryAfterS('10.0.0.9', 3000)).toBe(57);
    expect(limiter.allowed('10.0.0.9', 60_001)).toBe(true);
  });
});
