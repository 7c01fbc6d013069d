import { describe, expect, it } from 'vitest';
import { DEFAULT_SELF_IDENTITY } from '../../../src/core/config/self-identity.js';
import { parseReadParams, type ReadableBus } from '../../../src/ops/self/read-params.js';

const buses = new Map<string, ReadableBus>([['line1', { kind: 'rtu' }], ['plc', { kind: 'tcp' }]]);
const limits = DEFAULT_SELF_IDENTITY.commands;

function parse(params: Record<string, unknown>, max = limits) {
  return parseReadParams(params, buses, max);
}

describe('remote read params: accepted', () => {
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    ['defaults: one holding register', { bus: 'line1', unit: 1, address: 0 }, { table: 'holding', count: 1, values: 1 }],
    ['125 registers', { bus: 'line1', unit: 1, address: 0, count: 125, table: 'input' }, { table: 'input', count: 125 }],
    ['2000 coils', { bus: 'line1', unit: 247, table: 'coil', address: 0, count: 2000 }, { count: 2000, values: 2000 }],
    ['float32 values count registers twice', { bus: 'line1', unit: 1, address: 10, count: 4, type: 'float32', wordOrder: 'little' }, { count: 8, values: 4 }],
    ['string: count is its length in registers', { bus: 'line1', unit: 1, address: 0, count: 10, type: 'string' }, { count: 10, values: 1 }],
    ['unit 0 on TCP', { bus: 'plc', unit: 0, address: 0 }, { unit: 0 }],
    ['unit 255 on TCP', { bus: 'plc', unit: 255, address: 0 }, { unit: 255 }],
    ['last address', { bus: 'line1', unit: 1, address: 65535 }, { address: 65535 }],
  ];
  it.each(cases)('%s', (_what, params, expected) => {
    const result = parse(params);
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.read).toMatchObject(expected);
  });
});

describe('remote read params: refused with a reason, nothing read', () => {
  const deep: Record<string, unknown> = {};
  let cursor = deep;
  for (let i = 0; i < 5000; i += 1) cursor = (cursor.next = {}) as Record<string, unknown>;
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['no bus', { unit: 1, address: 0 }, /^bus must be the name of a bus \(known: line1, plc\)/],
    ['unknown bus', { bus: 'line9', unit: 1, address: 0 }, /^unknown bus "line9"/],
    ['bus of the wrong type', { bus: 7, unit: 1, address: 0 }, /^bus must be/],
    ['a huge bus name is cut in the reply', { bus: 'x'.repeat(200_000), unit: 1, address: 0 }, /^unknown bus "x{1,100}"\.\.\. \(200000 characters\)/],
    ['deep object as bus', { bus: deep, unit: 1, address: 0 }, /^bus must be .*\(got a mapping\)$/],
    ['no unit', { bus: 'line1', address: 0 }, /^unit is required/],
    ['unit as a string', { bus: 'line1', unit: '1', address: 0 }, /^unit must be an integer 1\.\.247 \(got "1"\)/],
    ['broadcast unit 0 on a serial line', { bus: 'line1', unit: 0, address: 0 }, /^unit must be an integer 1\.\.247/],
    ['unit 300 on TCP', { bus: 'plc', unit: 300, address: 0 }, /^unit must be an integer 0\.\.255/],
    ['fractional unit', { bus: 'line1', unit: 1.5, address: 0 }, /^unit must be an integer/],
    ['negative address', { bus: 'line1', unit: 1, address: -1 }, /^address must be an integer 0\.\.65535 \(got -1\)/],
    ['address beyond 65535', { bus: 'line1', unit: 1, address: 70000 }, /^address must be/],
    ['NaN-like address', { bus: 'line1', unit: 1, address: null }, /^address must be .*\(got null\)/],
    ['no address', { bus: 'line1', unit: 1 }, /^address is required/],
    ['unknown table', { bus: 'line1', unit: 1, address: 0, table: 'eeprom' }, /^table must be one of coil, discrete, holding, input \(got "eeprom"\)/],
    ['zero count', { bus: 'line1', unit: 1, address: 0, count: 0 }, /^count must be an integer 1\.\.125/],
    ['huge count', { bus: 'line1', unit: 1, address: 0, count: 1e9 }, /^count must be an integer 1\.\.125/],
    ['too many bits', { bus: 'line1', unit: 1, address: 0, table: 'discrete', count: 2001 }, /^count must be an integer 1\.\.2000/],
    ['typed values beyond the register bound', { bus: 'line1', unit: 1, address: 0, count: 40, type: 'float64' }, /^40 values of float64 need 160 registers, more than the 125/],
    ['past the end of the address space', { bus: 'line1', unit: 1, address: 65500, count: 100 }, /^the read runs past address 65535/],
    ['unknown type', { bus: 'line1', unit: 1, address: 0, type: 'f23' }, /^type must be one of bool, bit/],
    ['a register type on coils', { bus: 'line1', unit: 1, table: 'coil', address: 0, type: 'int16' }, /^type of a coil read must be bool/],
    ['bool on registers', { bus: 'line1', unit: 1, address: 0, type: 'bool' }, /^type bool is for coil and discrete reads/],
    ['bad bit number', { bus: 'line1', unit: 1, address: 0, type: 'bit', bit: 16 }, /^bit must be an integer 0\.\.15/],
    ['bad word order', { bus: 'line1', unit: 1, address: 0, type: 'int32', wordOrder: 'middle' }, /^wordOrder must be one of big, little/],
    ['unknown params', { bus: 'line1', unit: 1, address: 0, path: '/etc/passwd', shell: 'rm -rf /' }, /^unknown param\(s\) "path", "shell" \(known: bus, unit/],
  ];
  it.each(cases)('%s', (_what, params, reason) => {
    const result = parse(params);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.message).toMatch(reason);
      expect(result.message.length).toBeLessThan(400);
    }
  });

  it('applies the configured bounds, not only the protocol ones', () => {
    const small = { ...limits, readMaxRegisters: 10, readMaxBits: 16 };
    expect(parse({ bus: 'line1', unit: 1, address: 0, count: 11 }, small)).toMatchObject({ ok: false, message: expect.stringMatching(/^count must be an integer 1\.\.10 /) });
    expect(parse({ bus: 'line1', unit: 1, table: 'coil', address: 0, count: 17 }, small)).toMatchObject({ ok: false });
    expect(parse({ bus: 'line1', unit: 1, address: 0, count: 3, type: 'float64' }, small)).toMatchObject({ ok: false, message: expect.stringMatching(/need 12 registers, more than the 10/) });
  });
});
