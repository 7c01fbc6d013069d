import { describe, expect, it } from 'vitest';
import { compilePoint, engineeringRange } from '../../../src/core/points/codec.js';
import type { ByteOrder, ValueType, WordOrder } from '../../../src/core/points/types.js';
import { makePoint } from './make-point.js';

// Wire byte order of each (wordOrder, byteOrder), written out independently of the implementation.
const ORDERS: { word: WordOrder; byte: ByteOrder; l32: string; l64: string }[] = [
  { word: 'big', byte: 'big', l32: 'ABCD', l64: 'ABCDEFGH' },
  { word: 'little', byte: 'big', l32: 'CDAB', l64: 'GHEFCDAB' },
  { word: 'big', byte: 'little', l32: 'BADC', l64: 'BADCFEHG' },
  { word: 'little', byte: 'little', l32: 'DCBA', l64: 'HGFEDCBA' },
];

/** Canonical big-endian hex (e.g. '42F6E979') -> registers on the wire for a given label. */
function wireWords(hex: string, label: string): number[] {
  const bytes = hex.match(/../g)!.map((b) => parseInt(b, 16));
  const wire = [...label].map((letter) => bytes[letter.charCodeAt(0) - 65]);
  const words: number[] = [];
  for (let i = 0; i < wire.length; i += 2) words.push((wire[i] << 8) | wire[i + 1]);
  return words;
}

const NUMERIC_CASES: { type: ValueType; hex: string; value: number | string }[] = [
  { type: 'uint16', hex: '1234', value: 4660 },
  { type: 'uint16', hex: 'FFFF', value: 65535 },
  { type: 'int16', hex: 'FFFF', value: -1 },
  { type: 'int16', hex: '8000', value: -32768 },
  { type: 'int16', hex: '7FFF', value: 32767 },
  { type: 'float32', hex: '42F6E979', value: 123.456 },
  { type: 'float32', hex: 'C2F6E979', value: -123.456 },
  { type: 'float32', hex: '3F800000', value: 1 },
  { type: 'float32', hex: '00000000', value: 0 },
  { type: 'int32', hex: '12345678', value: 305419896 },
  { type: 'int32', hex: 'F8A432EB', value: -123456789 },
  { type: 'int32', hex: '80000000', value: -2147483648 },
  { type: 'uint32', hex: 'FFFFFFFE', value: 4294967294 },
  { type: 'uint32', hex: '00010000', value: 65536 },
  { type: 'float64', hex: '405EDD2F1A9FBE77', value: 123.456 },
  { type: 'float64', hex: '3FF8000000000000', value: 1.5 },
  { type: 'float64', hex: 'C000000000000000', value: -2 },
  { type: 'int64', hex: '0102030405060708', value: '72623859790382856' },
  { type: 'int64', hex: 'FFFFFFFFFFFFFFFF', value: -1 },
  { type: 'int64', hex: '8000000000000000', value: '-9223372036854775808' },
  { type: 'int64', hex: '7FFFFFFFFFFFFFFF', value: '9223372036854775807' },
  { type: 'int64', hex: '001FFFFFFFFFFFFF', value: 9007199254740991 },
  { type: 'int64', hex: '0020000000000000', value: '9007199254740992' },
  { type: 'int64', hex: 'FFE0000000000001', value: -9007199254740991 },
  { type: 'uint64', hex: 'FFFFFFFFFFFFFFFF', value: '18446744073709551615' },
  { type: 'uint64', hex: '0000000000000000', value: 0 },
  { type: 'uint64', hex: '00000000DEADBEEF', value: 3735928559 },
];

describe('codec: every numeric type in every order', () => {
  const rows = NUMERIC_CASES.flatMap((c) => ORDERS.map((o) => ({ ...c, ...o })));
  it.each(rows)('$type $hex in $word/$byte word/byte order -> $value', ({ type, hex, value, word, byte, l32, l64 }) => {
    const registers = hex.length / 4;
    const label = registers === 4 ? l64 : registers === 2 ? l32 : byte === 'big' ? 'AB' : 'BA';
    const words = wireWords(hex, label);
    const codec = compilePoint(makePoint({ type, wordOrder: word, byteOrder: byte }));
    expect(codec.width).toBe(registers);
    expect(codec.decodeRegisters(words)).toBe(value);
    const encoded = codec.encode(value);
    expect(encoded).toEqual({ ok: true, write: { kind: 'registers', address: 0, words }, value });
  });

  it('spells out the four float32 orders of 123.456', () => {
    const expected: Record<string, number[]> = {
      ABCD: [0x42f6, 0xe979], CDAB: [0xe979, 0x42f6], BADC: [0xf642, 0x79e9], DCBA: [0x79e9, 0xf642],
    };
    for (const o of ORDERS) {
      const codec = compilePoint(makePoint({ type: 'float32', wordOrder: o.word, byteOrder: o.byte }));
      expect(codec.decodeRegisters(expected[o.l32])).toBe(123.456);
    }
  });
});

describe('codec: scale and offset', () => {
  const cases: { type: ValueType; scale: number; offset: number; words: number[]; value: number }[] = [
    { type: 'uint16', scale: 0.1, offset: 0, words: [1234], value: 123.4 },
    { type: 'int16', scale: 0.1, offset: 0, words: [0xfb2e], value: -123.4 },
    { type: 'uint16', scale: 0.5, offset: -40, words: [100], value: 10 },
    { type: 'int16', scale: -1, offset: 0, words: [5], value: -5 },
    { type: 'uint32', scale: 0.001, offset: 0, words: [0x0001, 0x0000], value: 65.536 },
    { type: 'int32', scale: 0.01, offset: 273.15, words: [0xffff, 0xff9c], value: 272.15 },
    { type: 'float32', scale: 10, offset: 1, words: [0x3f80, 0x0000], value: 11 },
    { type: 'float64', scale: 2, offset: 0, words: [0x3ff8, 0, 0, 0], value: 3 },
    { type: 'int64', scale: 0.1, offset: 0, words: [0, 0, 0, 1234], value: 123.4 },
    { type: 'uint64', scale: 1, offset: 100, words: [0, 0, 0, 1], value: 101 },
  ];
  it.each(cases)('$type x$scale +$offset: $words <-> $value', ({ type, scale, offset, words, value }) => {
    const codec = compilePoint(makePoint({ type, scale, offset }));
    expect(codec.decodeRegisters(words)).toBe(value);
    const encoded = codec.encode(value);
    expect(encoded).toEqual({ ok: true, write: { kind: 'registers', address: 0, words }, value });
  });

  it('rounds to the nearest raw integer and reports the value actually written', () => {
    const codec = compilePoint(makePoint({ type: 'int16', scale: 0.1 }));
    expect(codec.encode(12.34)).toEqual({ ok: true, write: { kind: 'registers', address: 0, words: [123] }, value: 12.3 });
    expect(codec.encode(-0.25)).toMatchObject({ write: { words: [0xfffd] }, value: -0.3 });
    const f32 = compilePoint(makePoint({ type: 'float32' }));
    expect(f32.encode(0.1)).toMatchObject({ ok: true, value: 0.1 });
  });

  it('gives the engineering range for config cross-checks', () => {
    expect(engineeringRange(makePoint({ type: 'uint16', scale: 0.1 }))).toEqual({ min: 0, max: 6553.5 });
    expect(engineeringRange(makePoint({ type: 'int16', scale: -2, offset: 10 }))).toEqual({ min: -65524, max: 65546 });
    expect(engineeringRange(makePoint({ type: 'int32' }))).toEqual({ min: -2147483648, max: 2147483647 });
    expect(engineeringRange(makePoint({ type: 'string', length: 4 }))).toBeUndefined();
    expect(engineeringRange(makePoint({ type: 'bit' }))).toBeUndefined();
  });
});

describe('codec: bool and bit', () => {
  it('decodes coils and discrete inputs from bit blocks', () => {
    const coil = compilePoint(makePoint({ table: 'coil', type: 'bool', address: 12 }));
    expect(coil.decode({ table: 'coil', start: 10, bits: [false, false, true, false] })).toBe(true);
    expect(coil.decode({ table: 'coil', start: 12, bits: [false] })).toBe(false);
    const discrete = compilePoint(makePoint({ table: 'discrete', type: 'bool', address: 3, writable: false }));
    expect(discrete.decode({ table: 'discrete', start: 0, bits: [false, false, false, true] })).toBe(true);
  });

  it.each([
    { words: [0], value: false }, { words: [1], value: true }, { words: [0x8000], value: true },
  ])('bool in a holding register $words -> $value', ({ words, value }) => {
    expect(compilePoint(makePoint({ type: 'bool' })).decodeRegisters(words)).toBe(value);
  });

  it.each([
    { bit: 0, word: 0x0001, value: true }, { bit: 0, word: 0xfffe, value: false },
    { bit: 7, word: 0x0080, value: true }, { bit: 8, word: 0x0080, value: false },
    { bit: 15, word: 0x8000, value: true }, { bit: 15, word: 0x7fff, value: false },
  ])('bit $bit of 0x$word -> $value', ({ bit, word, value }) => {
    expect(compilePoint(makePoint({ type: 'bit', bit })).decodeRegisters([word])).toBe(value);
  });

  it.each([
    { p: { table: 'coil', type: 'bool', address: 5 }, v: true, write: { kind: 'coil', address: 5, value: true } },
    { p: { table: 'coil', type: 'bool', address: 5 }, v: 0, write: { kind: 'coil', address: 5, value: false } },
    { p: { type: 'bool', address: 7 }, v: 1, write: { kind: 'registers', address: 7, words: [1] } },
    { p: { type: 'bool', address: 7 }, v: false, write: { kind: 'registers', address: 7, words: [0] } },
    { p: { type: 'bit', bit: 9, address: 3 }, v: true, write: { kind: 'bit', address: 3, bit: 9, value: true } },
  ] as const)('encodes $v for $p', ({ p, v, write }) => {
    const result = compilePoint(makePoint(p)).encode(v);
    expect(result).toEqual({ ok: true, write, value: Boolean(v) });
  });
});

describe('codec: strings', () => {
  it.each([
    { byteOrder: 'big', words: [0x4845, 0x4c4c, 0x4f00, 0x0000], value: 'HELLO' },
    { byteOrder: 'little', words: [0x4548, 0x4c4c, 0x004f, 0x0000], value: 'HELLO' },
    { byteOrder: 'big', words: [0x4142, 0x4344, 0x4546, 0x4748], value: 'ABCDEFGH' },
    { byteOrder: 'big', words: [0xc3a9, 0x0000, 0x0000, 0x0000], value: 'é' },
    { byteOrder: 'big', words: [0, 0, 0, 0], value: '' },
  ] as const)('$value ($byteOrder byte order) round-trips', ({ byteOrder, words, value }) => {
    const codec = compilePoint(makePoint({ type: 'string', length: 4, byteOrder }));
    expect(codec.width).toBe(4);
    expect(codec.decodeRegisters(words)).toBe(value);
    expect(codec.encode(value)).toEqual({ ok: true, write: { kind: 'registers', address: 0, words }, value });
  });

  it('trims NUL and space padding on decode', () => {
    const codec = compilePoint(makePoint({ type: 'string', length: 4 }));
    expect(codec.decodeRegisters([0x2020, 0x4142, 0x2020, 0x2000])).toBe('AB');
    expect(codec.decodeRegisters([0x4120, 0x4200, 0x0000, 0x0000])).toBe('A B');
  });
});

describe('codec: decode from blocks', () => {
  it('finds the point at its offset inside a larger block', () => {
    const codec = compilePoint(makePoint({ type: 'float32', address: 102 }));
    const words = Uint16Array.from([1, 2, 0x42f6, 0xe979, 5]);
    expect(codec.decode({ table: 'holding', start: 100, words })).toBe(123.456);
  });

  it.each([
    { block: { table: 'holding', start: 103, words: [0, 0, 0] }, error: /outside the block holding 103\.\.105/ },
    { block: { table: 'holding', start: 100, words: [0, 0, 0] }, error: /outside the block holding 100\.\.102/ },
    { block: { table: 'input', start: 100, words: [0, 0, 0, 0] }, error: /holding table, block is input/ },
    { block: { table: 'holding', start: 100 }, error: /outside the block/ },
  ] as const)('throws a clear error when the block misses the point: $error', ({ block, error }) => {
    const codec = compilePoint(makePoint({ type: 'float32', address: 102 }));
    expect(() => codec.decode(block)).toThrow(error);
  });

  it('rejects a wrong register count in decodeRegisters', () => {
    expect(() => compilePoint(makePoint({ type: 'int32' })).decodeRegisters([1])).toThrow(/needs 2 register/);
  });
});

describe('codec: encode rejects bad values with clear messages', () => {
  it.each([
    { p: { type: 'uint16' }, v: 70000, error: 'value 70000 is outside uint16 range 0..65535' },
    { p: { type: 'uint16' }, v: -1, error: 'value -1 is outside uint16 range 0..65535' },
    { p: { type: 'int16' }, v: 32768, error: 'value 32768 is outside int16 range -32768..32767' },
    { p: { type: 'int32' }, v: 2 ** 31, error: 'value 2147483648 is outside int32 range -2147483648..2147483647' },
    { p: { type: 'uint32' }, v: 2 ** 32, error: 'value 4294967296 is outside uint32 range 0..4294967295' },
    { p: { type: 'uint16', scale: 0.1 }, v: 7000, error: 'value 7000 is outside 0..6553.5 (raw 70000 for uint16 range 0..65535 with scale 0.1, offset 0)' },
    { p: { type: 'int64' }, v: '9223372036854775808', error: 'value 9223372036854775808 is outside int64 range -9223372036854775808..9223372036854775807' },
    { p: { type: 'uint64' }, v: -1, error: 'value -1 is outside uint64 range 0..18446744073709551615' },
    { p: { type: 'uint64' }, v: '18446744073709551616', error: /outside uint64 range/ },
    { p: { type: 'float32' }, v: 1e39, error: /value 1e\+39 is outside float32 range/ },
    { p: { type: 'float64', scale: 1e-300 }, v: 1e300, error: /outside/ },
    { p: { type: 'int16' }, v: 'abc', error: 'expected a number, got "abc" (string)' },
    { p: { type: 'int16' }, v: '12.5', error: 'expected a number, got "12.5" (string)' },
    { p: { type: 'int16' }, v: true, error: 'expected a number, got true (boolean)' },
    { p: { type: 'int16' }, v: null, error: 'expected a number, got null' },
    { p: { type: 'int16' }, v: { a: 1 }, error: 'expected a number, got an object' },
    { p: { type: 'float32' }, v: Number.NaN, error: 'value NaN is not a finite number' },
    { p: { type: 'float64' }, v: Number.POSITIVE_INFINITY, error: 'value Infinity is not a finite number' },
    { p: { type: 'int16', min: 0, max: 100 }, v: 120, error: 'value 120 is above the maximum 100' },
    { p: { type: 'int16', min: 10, max: 100 }, v: 5, error: 'value 5 is below the minimum 10' },
    { p: { type: 'bool' }, v: 2, error: 'expected true/false (or 0/1), got 2 (number)' },
    { p: { type: 'bit' }, v: 'true', error: 'expected true/false (or 0/1), got "true" (string)' },
    { p: { type: 'string', length: 2 }, v: 'HELLO', error: 'text of 5 bytes does not fit 2 register(s) (4 bytes)' },
    { p: { type: 'string', length: 2 }, v: 12, error: 'expected a string, got 12 (number)' },
    { p: { type: 'int16', writable: false }, v: 1, error: 'point "p" is not writable' },
    { p: { type: 'int16', table: 'input' }, v: 1, error: 'point "p" is in the read-only input table' },
    { p: { type: 'bool', table: 'discrete' }, v: true, error: 'point "p" is in the read-only discrete table' },
  ] as const)('$p with $v', ({ p, v, error }) => {
    const result = compilePoint(makePoint(p)).encode(v);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      if (typeof error === 'string') expect(result.error).toBe(error);
      else expect(result.error).toMatch(error);
    }
  });

  it('accepts values exactly at the type edges and at min/max', () => {
    expect(compilePoint(makePoint({ type: 'int16' })).encode(-32768)).toMatchObject({ ok: true, value: -32768 });
    expect(compilePoint(makePoint({ type: 'uint16', min: 0, max: 100 })).encode(100)).toMatchObject({ ok: true });
    expect(compilePoint(makePoint({ type: 'int64' })).encode(-9007199254740991)).toMatchObject({ ok: true });
  });
});

describe('compilePoint rejects points it cannot code', () => {
  it.each([
    { p: { table: 'coil', type: 'int16' }, error: /type must be bool/ },
    { p: { table: 'discrete', type: 'bit' }, error: /type must be bool/ },
    { p: { type: 'bit', bit: 16 }, error: /bit must be an integer 0\.\.15/ },
    { p: { type: 'string', length: 0 }, error: /string length must be 1\.\.125/ },
    { p: { scale: 0 }, error: /scale must be a finite non-zero number/ },
    { p: { offset: Number.NaN }, error: /offset must be finite/ },
  ] as const)('$p', ({ p, error }) => {
    expect(() => compilePoint(makePoint(p))).toThrow(error);
  });
});
