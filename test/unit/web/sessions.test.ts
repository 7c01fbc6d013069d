// Sessions: bounded, idle ones expire on use, and a flood of anonymous visits never logs anyone out.
// Logins: limited per client address and over all addresses together.
import { describe, expect, it } from 'vitest';
import { LoginLimiter, SessionStore } from '../../../src/ops/web/sessions.js';
import { OneAtATime } from '../../../src/ops/web/page-login.js';

describe('SessionStore', () => {
  it('ends a session unused for idleMs, keeps one in use', () => {
    const store = new SessionStore(1000, 256);
    const a = store.create(true, 0);
    expect(store.get(a.id, 900)?.id).toBe(a.id);
    expect(store.get(a.id, 1800)?.id).toBe(a.id);
    expect(store.get(a.id, 2801)).toBeUndefined();
    expect(store.get('forged', 0)).toBeUndefined();
  });

  it('a flood of anonymous sessions evicts anonymous ones, not the logged-in engineer', () => {
    const store = new SessionStore(3_600_000, 256);
    const engineer = store.create(true, 0);
    for (let i = 0; i < 256 * 4; i++) store.create(false, i);
    expect(store.get(engineer.id, 10)?.authenticated).toBe(true);
  });

  it('keeps at most maxSessions, the least recently used going first', () => {
    const store = new SessionStore(3_600_000, 3);
    const [a, b, c] = [store.create(true, 0), store.create(true, 1), store.create(true, 2)];
    expect(store.get(a.id, 3)).toBeDefined();
    const d = store.create(true, 4);
    expect(store.get(b.id, 5)).toBeUndefined();
    expect([a, c, d].map((s) => store.get(s.id, 6)?.id)).toEqual([a.id, c.id, d.id]);
  });
});

describe('LoginLimiter', () => {
  it('refuses after perMinute failures from one address, for that address only, until the minute has passed', () => {
    const limiter = new LoginLimiter(3, 30);
    for (let i = 0; i < 3; i++) limiter.attempt('10.0.0.9', i * 1000);
    expect(limiter.allowed('10.0.0.9', 3000)).toBe(false);
    expect(limiter.allowed('10.0.0.8', 3000)).toBe(true);
    expect(limiter.globalCapReached(3000)).toBe(false);
    expect(limiter.retryAfterS('10.0.0.9', 3000)).toBe(57);
    expect(limiter.allowed('10.0.0.9', 60_001)).toBe(true);
  });

  it('refuses every address once totalPerMinute failures came from many addresses, each under its own limit', () => {
    const limiter = new LoginLimiter(5, 30);
    // 30 addresses, one wrong guess each at 100 ms intervals: none reaches its own limit.
    for (let i = 0; i < 30; i++) {
      expect(limiter.allowed(`10.0.1.${i}`, i * 100)).toBe(true);
      limiter.attempt(`10.0.1.${i}`, i * 100);
    }
    expect(limiter.globalCapReached(3000)).toBe(true);
    expect(limiter.allowed('10.0.1.200', 3000)).toBe(false);
    expect(limiter.allowed('10.0.1.0', 3000)).toBe(false);
    // The oldest of the 30 (at 0) leaves the window at 60 s: one more try then.
    expect(limiter.retryAfterS('10.0.1.200', 3000)).toBe(57);
    expect(limiter.allowed('10.0.1.200', 59_999)).toBe(false);
    expect(limiter.allowed('10.0.1.200', 60_000)).toBe(true);
    limiter.attempt('10.0.1.200', 60_000);
    expect(limiter.allowed('10.0.1.201', 60_000)).toBe(false);
    expect(limiter.allowed('10.0.1.201', 62_000)).toBe(true);
  });

  it('gives the longer wait when both limits hold, and 0 when none does', () => {
    const limiter = new LoginLimiter(2, 3);
    limiter.attempt('a', 0);
    limiter.attempt('b', 10_000);
    expect(limiter.retryAfterS('a', 10_000)).toBe(0);
    limiter.attempt('a', 20_000);
    // 'a' waits for its failure at 0 to pass (40 s); all together for the one at 0 too.
    expect(limiter.retryAfterS('a', 20_000)).toBe(40);
    expect(limiter.allowed('c', 20_000)).toBe(false);
    expect(limiter.retryAfterS('c', 20_000)).toBe(40);
    expect(limiter.allowed('c', 60_000)).toBe(true);
    expect(limiter.allowed('a', 60_000)).toBe(true);
  });

  it('counts an attempt before its check: a burst from one address gets perMinute checks, the rest refused', () => {
    const limiter = new LoginLimiter(5, 30);
    const granted = Array.from({ length: 40 }, () => limiter.attempt('10.0.2.1', 1000)).filter(Boolean).length;
    expect(granted).toBe(5);
    // A success takes its attempt back out.
    limiter.succeeded('10.0.2.1', 1000);
    expect(limiter.attempt('10.0.2.1', 1000)).toBe(true);
  });

  it('never refuses a loopback client for the cap over all addresses: strangers cannot lock out the tunnel', () => {
    const limiter = new LoginLimiter(5, 30);
    for (let i = 0; i < 30; i++) limiter.attempt(`10.0.3.${i}`, 0);
    expect(limiter.allowed('10.0.3.200', 1000)).toBe(false);
    for (const loopback of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) expect(limiter.attempt(loopback, 1000)).toBe(true);
    expect(limiter.retryAfterS('127.0.0.1', 1000)).toBe(0);
    // Its own limit still holds, and its attempts do not count for the strangers' total.
    for (let i = 0; i < 4; i++) limiter.attempt('127.0.0.1', 1000);
    expect(limiter.allowed('127.0.0.1', 1000)).toBe(false);
    expect(limiter.allowed('10.0.3.200', 60_000)).toBe(true);
  });
});

describe('OneAtATime', () => {
  it('runs one task at a time, the ones marked first ahead of the others, in order', async () => {
    const checks = new OneAtATime();
    let running = 0;
    let most = 0;
    const order: string[] = [];
    const task = (name: string) => async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setImmediate(resolve));
      order.push(name);
      running--;
      return name;
    };
    const all = [checks.run(false, task('a')), checks.run(false, task('b')), checks.run(true, task('loop-1')), checks.run(false, task('c')), checks.run(true, task('loop-2'))];
    expect(await Promise.all(all)).toEqual(['a', 'b', 'loop-1', 'c', 'loop-2']);
    expect(order).toEqual(['a', 'loop-1', 'loop-2', 'b', 'c']);
    expect(most).toBe(1);
  });
});
