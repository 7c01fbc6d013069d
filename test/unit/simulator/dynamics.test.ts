import { describe, expect, it } from 'vitest';
import { dynamicValue, dynamicWords, type DynamicRegister } from '../../../packages/simulator/src/dynamics.js';

describe('dynamic registers', () => {
  it.each<[string, DynamicRegister, number, number]>([
    ['counter at 0', { table: 'input', address: 0, counter: {} }, 0, 0],
    ['counter after 2.5 s', { table: 'input', address: 0, counter: {} }, 2500, 2],
    ['counter 10/s from 100', { table: 'input', address: 0, counter: { start: 100, perSecond: 10 } }, 1000, 110],
    ['counter wraps at max', { table: 'input', address: 0, counter: { start: 0, max: 9 } }, 12_000, 2],
    ['uint16 counter wraps at 65535', { table: 'input', address: 0, counter: { perSecond: 1000 } }, 65_536_000, 0],
    ['sine at 0', { table: 'input', address: 0, type: 'float32', sine: { offset: 230, amplitude: 5, periodSeconds: 4 } }, 0, 230],
    ['sine at quarter period', { table: 'input', address: 0, type: 'float32', sine: { offset: 230, amplitude: 5, periodSeconds: 4 } }, 1000, 235],
    ['integer sine rounds', { table: 'input', address: 0, type: 'int16', sine: { amplitude: 10, periodSeconds: 12 } }, 1000, 5],
  ])('%s', (_name, spec, elapsed, expected) => {
    expect(dynamicValue(spec, elapsed)).toBeCloseTo(expected, 5);
  });

  it.each<[string, DynamicRegister, number, number[]]>([
    ['float32 words', { table: 'input', address: 0, type: 'float32', sine: { offset: 1, amplitude: 0, periodSeconds: 1 } }, 0, [0x3f80, 0]],
    ['uint32 little word order', { table: 'holding', address: 0, type: 'uint32', wordOrder: 'little', counter: { start: 0x10002 } }, 0, [2, 1]],
    ['bit toggles with a counter', { table: 'discrete', address: 0, counter: {} }, 1000, [1]],
    ['bit off on even seconds', { table: 'coil', address: 0, counter: {} }, 2000, [0]],
    ['int16 sine clamps to the type', { table: 'input', address: 0, type: 'int16', sine: { amplitude: 1e6, periodSeconds: 4 } }, 1000, [0x7fff]],
  ])('%s', (_name, spec, elapsed, words) => {
    expect(dynamicWords(spec, elapsed)).toEqual(words);
  });
});
