// ReadCache (pure): answers only from one young covering block, exactly its raw words; writes forget.
import { describe, expect, it } from 'vitest';
import { ReadCache } from '../../../src/core/modbus/read-cache.js';

const T0 = 1_700_000_000_000;

function filled(): ReadCache {
  const cache = new ReadCache(8);
  cache.record({ unit: 1, table: 'holding', start: 100, words: Uint16Array.of(1, 2, 3, 4, 5), at: T0 });
  cache.record({ unit: 1, table: 'coil', start: 0, bits: [true, false, true], at: T0 });
  return cache;
}

describe('ReadCache', () => {
  it.each([
    ['inside a block', 1, 'holding', 101, 3, 500, [2, 3, 4]],
    ['the whole block', 1, 'holding', 100, 5, 999, [1, 2, 3, 4, 5]],
    ['past the block end', 1, 'holding', 103, 3, 500, undefined],
    ['before the block', 1, 'holding', 99, 2, 500, undefined],
    ['too old', 1, 'holding', 100, 1, 1000, undefined],
    ['another table', 1, 'input', 100, 1, 500, undefined],
    ['another unit', 2, 'holding', 100, 1, 500, undefined],
  ] as const)('%s', (_name, unit, table, start, count, ageMs, words) => {
    const hit = filled().lookup(unit, table, start, count, T0 + ageMs, 1000);
    expect(hit?.words ? [...hit.words] : hit).toEqual(words);
  });

  it('answers bits', () => {
    expect(filled().lookup(1, 'coil', 1, 2, T0, 1000)).toEqual({ bits: [false, true] });
  });

  it('takes the youngest covering block', () => {
    const cache = filled();
    cache.record({ unit: 1, table: 'holding', start: 102, words: Uint16Array.of(30), at: T0 + 10 });
    expect(cache.lookup(1, 'holding', 102, 1, T0 + 20, 1000)).toEqual({ words: Uint16Array.of(30) });
  });

  it('a write forgets every block it touches, no other', () => {
    const cache = filled();
    cache.forget(1, 'holding', 104, 110);
    expect(cache.lookup(1, 'holding', 100, 1, T0, 1000)).toBeUndefined();
    expect(cache.lookup(1, 'coil', 0, 1, T0, 1000)).toEqual({ bits: [true] });
  });

  it('a broadcast write forgets what it touches on every unit, no other', () => {
    const cache = filled();
    cache.record({ unit: 2, table: 'holding', start: 100, words: Uint16Array.of(9), at: T0 });
    cache.record({ unit: 3, table: 'holding', start: 200, words: Uint16Array.of(8), at: T0 });
    cache.forget('every', 'holding', 100, 100);
    expect(cache.lookup(1, 'holding', 101, 1, T0, 1000)).toBeUndefined();
    expect(cache.lookup(2, 'holding', 100, 1, T0, 1000)).toBeUndefined();
    expect(cache.lookup(3, 'holding', 200, 1, T0, 1000)).toEqual({ words: Uint16Array.of(8) });
    expect(cache.lookup(1, 'coil', 0, 1, T0, 1000)).toEqual({ bits: [true] });
  });

  it('stays bounded, dropping the oldest', () => {
    const cache = new ReadCache(4);
    for (let i = 0; i < 10; i += 1) cache.record({ unit: 1, table: 'input', start: i * 10, words: Uint16Array.of(i), at: T0 + i });
    expect(cache.size).toBe(4);
    expect(cache.lookup(1, 'input', 0, 1, T0 + 10, 1000)).toBeUndefined();
    expect(cache.lookup(1, 'input', 90, 1, T0 + 10, 1000)).toEqual({ words: Uint16Array.of(9) });
  });
});
