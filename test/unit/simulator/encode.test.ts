import { describe, expect, it } from 'vitest';
import { encodeTyped, registersOf, type TypedValue } from '../../../packages/simulator/src/encode.js';

const words = (...w: number[]) => ({ ok: true, words: w });

describe('encodeTyped', () => {
  it.each<[string, TypedValue, unknown]>([
    ['uint16', { type: 'uint16', value: 65535 }, words(0xffff)],
    ['int16 negative', { type: 'int16', value: -2 }, words(0xfffe)],
    ['int16 byte swap', { type: 'int16', value: 0x1234, byteOrder: 'little' }, words(0x3412)],
    ['uint32 ABCD', { type: 'uint32', value: 0x12345678 }, words(0x1234, 0x5678)],
    ['uint32 CDAB', { type: 'uint32', value: 0x12345678, wordOrder: 'little' }, words(0x5678, 0x1234)],
    ['uint32 BADC', { type: 'uint32', value: 0x12345678, byteOrder: 'little' }, words(0x3412, 0x7856)],
    ['uint32 DCBA', { type: 'uint32', value: 0x12345678, wordOrder: 'little', byteOrder: 'little' }, words(0x7856, 0x3412)],
    ['int32 -1', { type: 'int32', value: -1 }, words(0xffff, 0xffff)],
    ['float32 230.1', { type: 'float32', value: 230.1 }, words(0x4366, 0x199a)],
    ['float32 1.0 CDAB', { type: 'float32', value: 1, wordOrder: 'little' }, words(0x0000, 0x3f80)],
    ['float64 1.0', { type: 'float64', value: 1 }, words(0x3ff0, 0, 0, 0)],
    ['int64 -2', { type: 'int64', value: -2 }, words(0xffff, 0xffff, 0xffff, 0xfffe)],
    ['uint64 2^40', { type: 'uint64', value: 2 ** 40 }, words(0, 0x0100, 0, 0)],
    ['string padded', { type: 'string', value: 'ABC', registers: 3 }, words(0x4142, 0x4300, 0)],
  ])('%s', (_name, spec, expected) => {
    expect(encodeTyped(spec)).toEqual(expected);
  });

  it.each<[string, TypedValue, string]>([
    ['uint16 too big', { type: 'uint16', value: 65536 }, 'out of uint16 range'],
    ['int16 too small', { type: 'int16', value: -32769 }, 'out of int16 range'],
    ['uint32 negative', { type: 'uint32', value: -1 }, 'out of uint32 range'],
    ['fraction into int', { type: 'int32', value: 1.5 }, 'needs an integer'],
    ['text into number', { type: 'float32', value: 'x' }, 'finite number expected'],
    ['NaN', { type: 'float64', value: Number.NaN }, 'finite number expected'],
    ['float32 overflow', { type: 'float32', value: 1e39 }, 'out of float32 range'],
    ['string too long', { type: 'string', value: 'ABCDE', registers: 2 }, 'needs more than 2 registers'],
  ])('rejects %s', (_name, spec, message) => {
    const result = encodeTyped(spec);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain(message);
  });

  it.each<[TypedValue, number]>([
    [{ type: 'int16', value: 0 }, 1],
    [{ type: 'float32', value: 0 }, 2],
    [{ type: 'uint64', value: 0 }, 4],
    [{ type: 'string', value: 'HELLO' }, 3],
    [{ type: 'string', value: 'HI', registers: 8 }, 8],
  ])('registersOf %o = %i', (spec, count) => {
    expect(registersOf(spec)).toBe(count);
  });
});
