// The policy of a share, table-driven: unit mapping, read-only, function and address allow-lists.
import { describe, expect, it } from 'vitest';
import { validateSite } from '../../../src/core/config/site.js';
import { EXCEPTION, type ShareRequest } from '../../../src/core/modbus/mbap-request.js';
import { sharePolicy } from '../../../src/core/modbus/share-policy.js';

function policyOf(share: Record<string, unknown>, busUnits: number[] = [1, 2]) {
  const result = validateSite({ buses: [{ name: 'l', kind: 'rtu', path: '/dev/ttyS0', share: { port: 1502, ...share } }], devices: [] });
  expect(result.issues).toEqual([]);
  return sharePolicy(result.site!.buses[0].share!, busUnits);
}

const read = (start: number, count: number, table: 'holding' | 'input' = 'holding'): ShareRequest =>
  ({ kind: 'read', functionCode: table === 'holding' ? 3 : 4, table, start, count });
const write6 = (address: number): ShareRequest => ({ kind: 'write-registers', functionCode: 6, address, values: [1] });
const write5 = (address: number): ShareRequest => ({ kind: 'write-coils', functionCode: 5, address, values: [true] });

const RW = { access: 'read-write' };
const BROADCAST = { access: 'read-write', allowBroadcast: true };
const BROADCAST_LIMITED = { ...BROADCAST, policy: { 0: { functions: [6], ranges: [{ table: 'holding', from: 100, to: 109 }] } } };
const write16 = (address: number): ShareRequest => ({ kind: 'write-registers', functionCode: 16, address, values: [1, 2] });
const write15 = (address: number): ShareRequest => ({ kind: 'write-coils', functionCode: 15, address, values: [true, false, true] });
const LIMITED = { access: 'read-write', units: { 10: 1, 0: 2 }, policy: { 10: { functions: [3, 6], ranges: [{ table: 'holding', from: 100, to: 109 }] } } };

describe('sharePolicy', () => {
  it.each([
    ['a configured unit, as itself', {}, 1, read(0, 10), { ok: true, busUnit: 1 }],
    ['a unit no device has', {}, 3, read(0, 1), EXCEPTION.gatewayPathUnavailable],
    ['unit 0 (broadcast) unmapped', {}, 0, read(0, 1), EXCEPTION.gatewayPathUnavailable],
    ['unit 255 unmapped', {}, 255, read(0, 1), EXCEPTION.gatewayPathUnavailable],
    ['a write to unit 0 without allowBroadcast', RW, 0, write6(0), EXCEPTION.gatewayPathUnavailable],
    ['FC6 to unit 0 with allowBroadcast', BROADCAST, 0, write6(7), { ok: true, busUnit: 0, broadcast: true }],
    ['FC5 to unit 0 with allowBroadcast', BROADCAST, 0, write5(7), { ok: true, busUnit: 0, broadcast: true }],
    ['FC15 to unit 0 with allowBroadcast', BROADCAST, 0, write15(7), { ok: true, busUnit: 0, broadcast: true }],
    ['FC16 to unit 0 with allowBroadcast', BROADCAST, 0, write16(7), { ok: true, busUnit: 0, broadcast: true }],
    ['a read of unit 0 with allowBroadcast', BROADCAST, 0, read(0, 1), EXCEPTION.illegalFunction],
    ['an input read of unit 0 with allowBroadcast', BROADCAST, 0, read(0, 1, 'input'), EXCEPTION.illegalFunction],
    ['allowBroadcast leaves other units as they were', BROADCAST, 1, write6(0), { ok: true, busUnit: 1 }],
    ['a broadcast inside unit 0\'s allow-lists', BROADCAST_LIMITED, 0, write6(105), { ok: true, busUnit: 0, broadcast: true }],
    ['a broadcast of a function outside unit 0\'s list', BROADCAST_LIMITED, 0, write16(105), EXCEPTION.illegalFunction],
    ['a broadcast outside unit 0\'s ranges', BROADCAST_LIMITED, 0, write6(110), EXCEPTION.illegalDataAddress],
    ['a write to a read-only share', {}, 1, write6(0), EXCEPTION.illegalFunction],
    ['a coil write to a read-only share', {}, 1, write5(0), EXCEPTION.illegalFunction],
    ['a write to a read-write share', RW, 1, write6(0), { ok: true, busUnit: 1 }],
    ['a mapped unit', LIMITED, 10, read(100, 10), { ok: true, busUnit: 1 }],
    ['unit 0 mapped explicitly', LIMITED, 0, read(0, 1), { ok: true, busUnit: 2 }],
    ['the map replaces identity', LIMITED, 1, read(0, 1), EXCEPTION.gatewayPathUnavailable],
    ['a function outside the list', LIMITED, 10, read(100, 1, 'input'), EXCEPTION.illegalFunction],
    ['a write in the list', LIMITED, 10, write6(105), { ok: true, busUnit: 1 }],
    ['a read running past the range', LIMITED, 10, read(105, 10), EXCEPTION.illegalDataAddress],
    ['a read before the range', LIMITED, 10, read(99, 1), EXCEPTION.illegalDataAddress],
    ['a write outside the range', LIMITED, 10, write6(110), EXCEPTION.illegalDataAddress],
  ])('%s', (_name, share, unit, request, expected) => {
    const decision = policyOf(share).decide(unit, request);
    if (typeof expected === 'number') expect(decision).toMatchObject({ ok: false, exception: expected });
    else expect(decision).toEqual(expected);
  });

  it('a range without table covers every table', () => {
    const policy = policyOf({ access: 'read-write', policy: { 1: { ranges: [{ from: 0, to: 9 }] } } });
    expect(policy.decide(1, read(0, 10, 'input'))).toEqual({ ok: true, busUnit: 1 });
    expect(policy.decide(1, write5(9))).toEqual({ ok: true, busUnit: 1 });
    expect(policy.decide(1, write5(10))).toMatchObject({ ok: false, exception: EXCEPTION.illegalDataAddress });
  });
});
