import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSimMap } from '../../../packages/simulator/src/map-file.js';

describe('parseSimMap', () => {
  it('reads plain, range, short-form and typed entries', () => {
    const result = parseSimMap(`
units:
  3:
    name: meter
    size: { holding: 50 }
    holding:
      - { address: 0, value: 42 }
      - { address: 1, value: -1 }
      - { start: 10, values: [1, 2, 3] }
      - { address: 20, type: float32, value: 1.0, wordOrder: little }
    input: { 5: 7 }
    coil:
      - { start: 0, values: [true, 0, 1] }
    faults: { slowMs: 5 }
`);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const [unit] = result.map.units;
    expect(unit).toMatchObject({ unit: 3, name: 'meter', sizes: { holding: 50 }, fault: { slowMs: 5 } });
    expect(unit.values).toEqual(expect.arrayContaining([
      { table: 'holding', address: 0, words: [42] },
      { table: 'holding', address: 1, words: [0xffff] },
      { table: 'holding', address: 10, words: [1, 2, 3] },
      { table: 'holding', address: 20, words: [0x0000, 0x3f80] },
      { table: 'input', address: 5, words: [7] },
      { table: 'coil', address: 0, words: [1, 0, 1] },
    ]));
  });

  it('accepts JSON too', () => {
    expect(parseSimMap('{"units": {"1": {"holding": {"0": 5}}}}').ok).toBe(true);
  });

  it.each([
    ['not yaml', 'units: [', 'not valid YAML/JSON'],
    ['no units', 'foo: 1', 'units: required mapping'],
    ['empty units', 'units: {}', 'units: at least one unit'],
    ['bad unit id', 'units: { 300: {} }', 'units.300: unit id must be 1..255'],
    ['unknown key', 'units: { 1: { holdings: {} } }', 'units.1.holdings: unknown key'],
    ['bad size', 'units: { 1: { size: { holding: 0 } } }', 'units.1.size.holding: must be 1..65536'],
    ['unknown size table', 'units: { 1: { size: { foo: 5 } } }', 'units.1.size.foo: unknown table'],
    ['value too large', 'units: { 1: { holding: [ { address: 0, value: 70000 } ] } }', 'units.1.holding[0].value: a register value must be an integer'],
    ['bad address', 'units: { 1: { holding: [ { address: -1, value: 1 } ] } }', 'units.1.holding[0].address: must be an address'],
    ['bad coil value', 'units: { 1: { coil: { 0: 5 } } }', 'units.1.coil.0: a coil value must be true/false or 1/0'],
    ['typed into coil', 'units: { 1: { coil: [ { address: 0, type: int16, value: 1 } ] } }', 'typed values only fit register tables'],
    ['unknown type', 'units: { 1: { holding: [ { address: 0, type: f23, value: 1 } ] } }', 'units.1.holding[0].type: unknown type "f23"'],
    ['typed out of range', 'units: { 1: { holding: [ { address: 0, type: uint16, value: -5 } ] } }', 'units.1.holding[0].value: -5 out of uint16 range'],
    ['bad word order', 'units: { 1: { holding: [ { address: 0, type: int32, value: 1, wordOrder: middle } ] } }', 'wordOrder: must be big or little'],
    ['beyond size', 'units: { 1: { size: { holding: 10 }, holding: [ { address: 9, type: float32, value: 1 } ] } }', 'beyond the table size 10'],
    ['range without values', 'units: { 1: { holding: [ { start: 3 } ] } }', 'units.1.holding[0].values: must be a list'],
    ['bad fault', 'units: { 1: { faults: { slowMs: -1 } } }', 'units.1.faults.slowMs: must be a number >= 0'],
    ['unknown fault', 'units: { 1: { faults: { explode: true } } }', 'units.1.faults.explode: unknown fault'],
    ['bad exception code', 'units: { 1: { faults: { exception: { code: 0 } } } }', 'units.1.faults.exception.code'],
    ['dynamic without behaviour', 'units: { 1: { dynamic: [ { table: input, address: 0 } ] } }', 'needs exactly one of counter'],
    ['dynamic bad sine', 'units: { 1: { dynamic: [ { table: input, address: 0, sine: { amplitude: 1, periodSeconds: 0 } } ] } }', 'sine.periodSeconds: must be a number > 0'],
    ['dynamic string type', 'units: { 1: { dynamic: [ { table: input, address: 0, type: string, counter: {} } ] } }', 'type: must be a numeric type'],
  ])('%s', (_name, text, message) => {
    const result = parseSimMap(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems.join('\n')).toContain(message);
  });

  it('reports every problem at once', () => {
    const result = parseSimMap('units: { 1: { holding: [ { address: -1 }, { address: 0, value: 1.5 } ], coil: { 0: 7 } } }');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems).toHaveLength(3);
  });

  it.each(['demo-meter', 'demo-plc'])('the shipped example %s is valid', (name) => {
    const result = parseSimMap(readFileSync(new URL(`../../../config/sim/${name}.yaml`, import.meta.url), 'utf8'));
    expect(result.ok ? [] : result.problems).toEqual([]);
  });
});
