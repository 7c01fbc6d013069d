import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../helpers/manual-clock.js';
import { ApiError } from '../../../packages/emulator/src/http/errors.js';
import { EXPIRED_TOKEN_MEMORY, TokenStore } from '../../../packages/emulator/src/http/tokens.js';

function failure(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return (err as ApiError).message;
  }
  return 'no error';
}

describe('TokenStore', () => {
  it.each([['exchange', 86_400_000], ['admin', 604_800_000]] as const)('%s tokens live exactly %i ms', (kind, ttl) => {
    const clock = new ManualClock(1_000);
    const store = new TokenStore(clock);
    const t = store.issue(kind, 'app', kind === 'admin' ? 'adm' : undefined);
    clock.advance(ttl - 1);
    expect(store.verify(`Bearer ${t.token}`)).toMatchObject({ kind, appId: 'app' });
    clock.advance(1);
    expect(failure(() => store.verify(`Bearer ${t.token}`))).toBe('Access token expired');
  });

  it.each([[undefined], ['Bearer'], ['Token abc'], ['Bearer unknown']])('refuses %s', (header) => {
    const store = new TokenStore(new ManualClock(0));
    expect(() => store.verify(header)).toThrow(ApiError);
  });

  it('still says "expired" for a token dropped when a new one was issued', () => {
    const clock = new ManualClock(0);
    const store = new TokenStore(clock);
    const old = store.issue('exchange', 'app');
    clock.advance(86_400_000);
    store.issue('exchange', 'app');
    expect(failure(() => store.verify(`Bearer ${old.token}`))).toBe('Access token expired');
    expect(failure(() => store.verify('Bearer never-issued'))).toBe('Invalid access token');
  });

  it(`remembers at most ${EXPIRED_TOKEN_MEMORY} expired tokens, forgetting the oldest`, () => {
    const clock = new ManualClock(0);
    const store = new TokenStore(clock);
    const first = store.issue('exchange', 'app');
    for (let i = 0; i < EXPIRED_TOKEN_MEMORY; i += 1) store.issue('exchange', 'app');
    clock.advance(86_400_000);
    const last = store.issue('exchange', 'app');
    expect(failure(() => store.verify(`Bearer ${first.token}`))).toBe('Invalid access token');
    clock.advance(86_400_000);
    store.issue('exchange', 'app');
    expect(failure(() => store.verify(`Bearer ${last.token}`))).toBe('Access token expired');
  });
});
