import { describe, expect, it } from 'vitest';
import { decideFault, isDisappeared, resizeReadReply, validateFault, type UnitFault } from '../../../packages/simulator/src/faults.js';

const at = (fault: UnitFault, sinceMs = 1000) => ({ fault, sinceMs });

describe('isDisappeared', () => {
  it.each<[string, UnitFault, number, boolean]>([
    ['true: gone at once', { disappear: true }, 1000, true],
    ['forever from the start', { disappear: {} }, 1000, true],
    ['for 500 ms: gone inside', { disappear: { forMs: 500 } }, 1499, true],
    ['for 500 ms: back after', { disappear: { forMs: 500 } }, 1500, false],
    ['after 200 ms: still there', { disappear: { afterMs: 200, forMs: 100 } }, 1199, false],
    ['after 200 ms: gone', { disappear: { afterMs: 200, forMs: 100 } }, 1250, true],
    ['after 200 ms: back', { disappear: { afterMs: 200, forMs: 100 } }, 1300, false],
    ['cyclic: gone in second cycle', { disappear: { forMs: 100, everyMs: 1000 } }, 2050, true],
    ['cyclic: present later in cycle', { disappear: { forMs: 100, everyMs: 1000 } }, 2500, false],
    ['no disappear fault', { slowMs: 10 }, 5000, false],
  ])('%s', (_name, fault, now, expected) => {
    expect(isDisappeared(at(fault), now)).toBe(expected);
  });
});

describe('decideFault', () => {
  const never = () => 0.99;
  it.each<[string, UnitFault | undefined, unknown]>([
    ['no fault', undefined, { answer: true, delayMs: 0, garble: false, extraRegisters: 0 }],
    ['timeout', { timeout: true }, { answer: false, reason: 'timeout' }],
    ['disappeared', { disappear: true }, { answer: false, reason: 'disappeared' }],
    ['slow', { slowMs: 30 }, { answer: true, delayMs: 30, garble: false, extraRegisters: 0 }],
    ['garble always', { garble: true }, { answer: true, delayMs: 0, garble: true, extraRegisters: 0 }],
    ['garble 10 % with a high draw', { garble: 0.1 }, { answer: true, delayMs: 0, garble: false, extraRegisters: 0 }],
    ['exception', { exception: { code: 6 } }, { answer: true, delayMs: 0, garble: false, exception: { code: 6 }, extraRegisters: 0 }],
    ['slow exception', { slowMs: 5, exception: { code: 4 } }, { answer: true, delayMs: 5, garble: false, exception: { code: 4 }, extraRegisters: 0 }],
    ['off by one', { extraRegisters: 1 }, { answer: true, delayMs: 0, garble: false, extraRegisters: 1 }],
  ])('%s', (_name, fault, expected) => {
    expect(decideFault(fault === undefined ? undefined : at(fault), 1000, never)).toEqual(expected);
  });

  it('garbles a fraction of replies with the random source', () => {
    expect(decideFault(at({ garble: 0.5 }), 1000, () => 0.2)).toMatchObject({ garble: true });
  });
});

describe('validateFault', () => {
  it.each<[unknown, string]>([
    [null, 'f: must be an object'],
    [{ timeout: 'yes' }, 'f.timeout: must be true or false'],
    [{ garble: 2 }, 'f.garble: must be true, false or a fraction 0..1'],
    [{ disappear: 'soon' }, 'f.disappear: must be true or { afterMs, forMs, everyMs }'],
    [{ disappear: { everyMs: 10 } }, 'f.disappear.everyMs: needs forMs'],
    [{ disappear: { forMs: -1 } }, 'f.disappear.forMs: must be a number >= 0'],
    [{ exception: { code: 2, table: 'registers' } }, 'f.exception.table: must be one of'],
    [{ exception: { code: 2, functions: [300] } }, 'f.exception.functions'],
    [{ extraRegisters: 0 }, 'f.extraRegisters: must be a whole number of registers -124..124, not 0'],
    [{ extraRegisters: 1.5 }, 'f.extraRegisters'],
    [{ extraRegisters: 200 }, 'f.extraRegisters'],
  ])('%o', (fault, message) => {
    expect(validateFault(fault, 'f').join('\n')).toContain(message);
  });

  it('accepts a full fault', () => {
    expect(validateFault({ exception: { code: 2, table: 'holding', address: 5, count: 2, functions: [3] }, slowMs: 1, garble: 0.5, disappear: { afterMs: 1, forMs: 2, everyMs: 3 } }, 'f')).toEqual([]);
  });
});

describe('resizeReadReply (off-by-N register reads)', () => {
  const reply = Buffer.from([3, 4, 0, 1, 0, 2]);
  it.each<[string, Buffer, number, number[]]>([
    ['one more: byte count 6, the added register 0xBAD0', reply, 1, [3, 6, 0, 1, 0, 2, 0xba, 0xd0]],
    ['one fewer: byte count 2', reply, -1, [3, 2, 0, 1]],
    ['never below one register', reply, -5, [3, 2, 0, 1]],
    ['FC4 too', Buffer.from([4, 2, 0, 9]), 1, [4, 4, 0, 9, 0xba, 0xd0]],
    ['an exception reply unchanged', Buffer.from([0x83, 2]), 1, [0x83, 2]],
    ['a write echo unchanged', Buffer.from([6, 0, 1, 0, 7]), 1, [6, 0, 1, 0, 7]],
  ])('%s', (_name, pdu, extra, expected) => {
    expect([...resizeReadReply(pdu, extra)]).toEqual(expected);
  });
});
