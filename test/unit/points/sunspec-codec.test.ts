// SunSpec codec features: "not implemented" raw values decode as absent, and scale factors held in
// another register (value = raw x 10^sf), including the hostile factors a broken device sends.
import { describe, expect, it } from 'vitest';
import { compilePoint } from '../../../src/core/points/codec.js';
import { applyScaleFactors, withPowerOfTen } from '../../../src/core/points/scale-factor.js';
import type { PointValue } from '../../../src/core/points/types.js';
import { makePoint } from './make-point.js';

describe('"not implemented" values', () => {
  it.each([
    { type: 'int16', notImplemented: -32768, words: [0x8000], other: [0x8001], otherValue: -32767 },
    { type: 'uint16', notImplemented: 65535, words: [0xffff], other: [0xfffe], otherValue: 65534 },
    { type: 'uint16', notImplemented: 0, words: [0], other: [1], otherValue: 1 },
    { type: 'int32', notImplemented: -2147483648, words: [0x8000, 0], other: [0x8000, 1], otherValue: -2147483647 },
    { type: 'uint32', notImplemented: 4294967295, words: [0xffff, 0xffff], other: [0xffff, 0xfffe], otherValue: 4294967294 },
    { type: 'uint32', notImplemented: 0, words: [0, 0], other: [0, 1], otherValue: 1 },
    { type: 'int64', notImplemented: -9223372036854775808, words: [0x8000, 0, 0, 0], other: [0x8000, 0, 0, 1], otherValue: '-9223372036854775807' },
  ] as const)('$type marker $notImplemented is absent, its neighbour is a number', ({ type, notImplemented, words, other, otherValue }) => {
    const codec = compilePoint(makePoint({ type, notImplemented, length: words.length, writable: false }));
    expect(codec.decodeRegisters(words)).toBeUndefined();
    expect(codec.decodeRegisters(other)).toBe(otherValue);
  });

  it('compares the raw value, before scale and offset', () => {
    const codec = compilePoint(makePoint({ type: 'uint16', notImplemented: 65535, scale: 0.1, writable: false }));
    expect(codec.decodeRegisters([0xffff])).toBeUndefined();
    expect(codec.decodeRegisters([2305])).toBe(230.5);
  });

  it('honours the byte order (the marker is a raw value, not a word pattern)', () => {
    const codec = compilePoint(makePoint({ type: 'int16', notImplemented: -32768, byteOrder: 'little', writable: false }));
    expect(codec.decodeRegisters([0x0080])).toBeUndefined();
    expect(codec.decodeRegisters([0x8000])).toBe(128);
  });

  it('a string of NUL registers is absent when "" is its marker; text is text', () => {
    const codec = compilePoint(makePoint({ type: 'string', length: 2, notImplemented: '', writable: false }));
    expect(codec.decodeRegisters([0, 0])).toBeUndefined();
    expect(codec.decodeRegisters([0x4142, 0])).toBe('AB');
    expect(compilePoint(makePoint({ type: 'string', length: 2, writable: false })).decodeRegisters([0, 0])).toBe('');
  });

  it('refuses to write the marker as if it were a value', () => {
    const codec = compilePoint(makePoint({ type: 'uint16', notImplemented: 65535 }));
    expect(codec.encode(65535)).toMatchObject({ ok: false });
    expect(codec.encode(65534)).toMatchObject({ ok: true, value: 65534 });
  });
});

describe('scale factors', () => {
  const watts = makePoint({ id: 'W', type: 'int16', scaleFactor: 'W_SF', writable: false });
  const run = (values: Record<string, PointValue>) => {
    const copy = { ...values };
    const misses = applyScaleFactors(copy, [watts]);
    return { values: copy, misses: misses.map((m) => m.message) };
  };

  it.each([
    { raw: 12345, sf: -1, want: 1234.5 },
    { raw: 123, sf: -2, want: 1.23 },
    { raw: 5, sf: 3, want: 5000 },
    { raw: -300, sf: -1, want: -30 },
    { raw: 7, sf: 0, want: 7 },
    { raw: 1, sf: -10, want: 1e-10 },
  ])('$raw x 10^$sf = $want', ({ raw, sf, want }) => {
    expect(run({ W: raw, W_SF: sf }).values.W).toBe(want);
  });

  it.each([
    { name: 'factor not read this cycle', values: { W: 100 }, why: /not read or is not implemented/ },
    { name: 'factor out of range (foreign register)', values: { W: 100, W_SF: 11 }, why: /is 11, outside -10\.\.10/ },
    { name: 'factor far out of range', values: { W: 100, W_SF: -32767 }, why: /outside/ },
    { name: 'factor not an integer', values: { W: 100, W_SF: 1.5 }, why: /outside/ },
    { name: 'factor not a number', values: { W: 100, W_SF: 'x' }, why: /outside/ },
    { name: 'value not numeric', values: { W: 'abc', W_SF: 0 }, why: /not numeric/ },
  ])('$name: the point is absent and the reason given, never an unscaled number', ({ values, why }) => {
    const result = run(values as Record<string, PointValue>);
    expect(result.values.W).toBeUndefined();
    expect(result.misses).toHaveLength(1);
    expect(result.misses[0]).toMatch(why);
  });

  it('leaves a point that has no value of its own alone (its read already said why)', () => {
    expect(run({ W_SF: -1 })).toEqual({ values: { W_SF: -1 }, misses: [] });
  });

  it('trims binary noise', () => {
    expect(withPowerOfTen(123, -1)).toBe(12.3);
    expect(withPowerOfTen(3, -1)).toBe(0.3);
  });
});
