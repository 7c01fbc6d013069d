import { describe, expect, it } from 'vitest';
import {
  MAX_REGISTRATION_BYTES, parseRegistration, TerminatorFilter,
} from '../../../packages/emulator/src/channel/registration.js';
import { Presence, type Via } from '../../../packages/emulator/src/channel/presence.js';

const tokens: Record<string, string> = { 'tok-a': 'dev-A', 'tok-ab': 'dev-AB' };
const authenticate = (token: string, key: string) => (key === 'pk' ? tokens[token] : undefined);

describe('parseRegistration', () => {
  it.each([
    ['pk&tok-a', { status: 'registered', deviceId: 'dev-A', consumed: 8 }],
    ['pk&tok-a\r\n', { status: 'registered', deviceId: 'dev-A', consumed: 8 }],
    ['pk&tok-a\u0001\u0003', { status: 'registered', deviceId: 'dev-A', consumed: 8 }],
    ['pk&tok-', { status: 'incomplete' }],
    ['pk', { status: 'incomplete' }],
    ['', { status: 'incomplete' }],
    ['pk&nope\r\n', { status: 'refused', reason: 'unknown credentials' }],
    ['bad&tok-a\r\n', { status: 'refused', reason: 'unknown credentials' }],
  ])('%j -> %j', (input, expected) => {
    expect(parseRegistration(Buffer.from(input, 'latin1'), authenticate)).toEqual(expected);
  });

  it('takes the shortest matching token (no terminator to tell them apart)', () => {
    expect(parseRegistration(Buffer.from('pk&tok-ab'), authenticate)).toMatchObject({ deviceId: 'dev-A', consumed: 8 });
  });

  it('refuses endless garbage instead of buffering it', () => {
    expect(parseRegistration(Buffer.alloc(MAX_REGISTRATION_BYTES + 1, 0x41), authenticate)).toMatchObject({ status: 'refused' });
    const longToken = Buffer.concat([Buffer.from('pk&'), Buffer.alloc(MAX_REGISTRATION_BYTES, 0x41)]);
    expect(parseRegistration(longToken, authenticate)).toMatchObject({ status: 'refused' });
  });
});

describe('TerminatorFilter', () => {
  it.each([
    [['\r\nabc'], 'abc'],
    [['\r', '\nabc'], 'abc'],
    [['', '\r\n', 'x'], 'x'],
    [['abc\r\n'], 'abc\r\n'],
    [['\rx'], '\rx'],
    [['\r', 'x'], '\rx'],
    [['\r\n', '\r\n'], '\r\n'],
  ])('%j -> %j', (chunks, expected) => {
    const filter = new TerminatorFilter();
    const out = chunks.map((chunk) => filter.push(Buffer.from(chunk, 'latin1')));
    expect(Buffer.concat(out).toString('latin1')).toBe(expected);
  });
});

describe('Presence', () => {
  function recorder() {
    const log: string[] = [];
    const presence = new Presence('mqtt', {
      onConnected: (id: string, via: Via) => log.push(`up ${id} ${via}`),
      onDisconnected: (id: string, via: Via) => log.push(`down ${id} ${via}`),
    });
    return { log, presence };
  }

  it('reports each transition once', () => {
    const { log, presence } = recorder();
    const c1 = {};
    presence.join('d', c1);
    expect(presence.isOnline('d')).toBe(false);
    presence.ready('d', c1);
    presence.ready('d', c1);
    presence.leave('d', c1);
    presence.leave('d', c1);
    expect(log).toEqual(['up d mqtt', 'down d mqtt']);
  });

  it('a replacement that joins before the old leaves is no transition', () => {
    const { log, presence } = recorder();
    const older = {};
    const newer = {};
    presence.join('d', older);
    presence.ready('d', older);
    presence.join('d', newer);
    presence.leave('d', older);
    presence.ready('d', newer);
    expect(presence.isOnline('d')).toBe(true);
    presence.leave('d', newer);
    expect(log).toEqual(['up d mqtt', 'down d mqtt']);
  });

  it('a connection that never got ready leaves silently; strangers are ignored', () => {
    const { log, presence } = recorder();
    presence.join('d', {});
    presence.ready('d', {});
    presence.leave('x', {});
    expect(log).toEqual([]);
    expect(presence.isOnline('d')).toBe(false);
  });
});
