// Interface A rate limiting: headers on every response, 429 with Retry-After, recovery, run-time change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../helpers/manual-clock.js';
import { startTestEmulator, type TestEmulator } from './helpers.js';

const T0 = Date.UTC(2026, 0, 1, 0, 0, 0); // a window boundary for windows of whole seconds

describe('emulator interface A rate limiting', () => {
  const clock = new ManualClock(T0);
  let t: TestEmulator;
  let tok: string;
  beforeAll(async () => {
    t = await startTestEmulator({ clock, rateLimit: { limit: 3, windowS: 10 } });
    tok = await t.token(); // uses 1 request of the first window
    clock.advance(10_000);
  });
  afterAll(async () => { await t.emu.close(); });

  it('puts the headers on normal responses, then answers 429, then recovers', async () => {
    clock.set(T0 + 12_000);
    const ok1 = await t.api('GET', '/api/v1/project', undefined, tok);
    expect(ok1.status).toBe(200);
    expect(ok1.headers.get('x-ratelimit-limit')).toBe('3');
    expect(ok1.headers.get('x-ratelimit-remaining')).toBe('2');
    expect(ok1.headers.get('x-ratelimit-reset')).toBe(String((T0 + 20_000) / 1000));
    expect(ok1.headers.get('retry-after')).toBeNull();
    await t.api('GET', '/api/v1/project', undefined, tok);
    expect((await t.api('GET', '/api/v1/nothing', undefined, tok)).headers.get('x-ratelimit-remaining')).toBe('0');
    const limited = await t.api('GET', '/api/v1/project', undefined, tok);
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ result: false, errcode: 429 });
    expect(limited.headers.get('retry-after')).toBe('8');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    clock.set(T0 + 20_000);
    const recovered = await t.api('GET', '/api/v1/project', undefined, tok);
    expect(recovered.status).toBe(200);
    expect(recovered.headers.get('x-ratelimit-remaining')).toBe('2');
  });

  it('does not limit interface B', async () => {
    for (let i = 0; i < 5; i += 1) {
      const r = await t.app('GET', '/app/device/v1/demo-meter-1-token/attributes');
      expect(r.status).toBe(200);
      expect(r.headers.get('x-ratelimit-limit')).toBeNull();
    }
  });

  it('changes the limit at run time', async () => {
    clock.set(T0 + 30_000);
    t.emu.setRateLimit({ limit: 1, windowS: 60 });
    const first = await t.api('GET', '/api/v1/project', undefined, tok);
    expect(first.headers.get('x-ratelimit-limit')).toBe('1');
    expect(first.headers.get('x-ratelimit-reset')).toBe(String((T0 + 60_000) / 1000));
    const second = await t.api('GET', '/api/v1/project', undefined, tok);
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('30');
    expect(() => t.emu.setRateLimit({ limit: 0, windowS: 1 })).toThrow(RangeError);
  });
});
