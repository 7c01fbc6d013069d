import { describe, expect, it } from 'vitest';
import { formatInterpretations, interpretRegisters, type InterpretationRow } from '../../../src/core/points/interpret.js';

function valuesOf(row: InterpretationRow | undefined): Record<string, string> {
  return Object.fromEntries((row?.values ?? []).map((v) => [v.type, v.text]));
}

function find(rows: InterpretationRow[], address: number, order: string): InterpretationRow | undefined {
  return rows.find((r) => r.address === address && r.order === order);
}

describe('interpretRegisters', () => {
  it('shows each register as hex, uint16, int16 and chars', () => {
    const rows = interpretRegisters([0xffff, 0x4142], 40);
    expect(rows.filter((r) => r.registers === 1)).toEqual([
      { address: 40, registers: 1, order: 'AB', hex: '0xFFFF', values: [
        { type: 'uint16', text: '65535' }, { type: 'int16', text: '-1' }, { type: 'chars', text: '".."' }] },
      { address: 41, registers: 1, order: 'AB', hex: '0x4142', values: [
        { type: 'uint16', text: '16706' }, { type: 'int16', text: '16706' }, { type: 'chars', text: '"AB"' }] },
    ]);
  });

  it.each([
    { order: 'ABCD', words: [0x42f6, 0xe979] },
    { order: 'CDAB', words: [0xe979, 0x42f6] },
    { order: 'BADC', words: [0xf642, 0x79e9] },
    { order: 'DCBA', words: [0x79e9, 0xf642] },
  ])('finds float32 123.456 in order $order', ({ order, words }) => {
    const row = find(interpretRegisters(words), 0, order);
    expect(valuesOf(row)).toEqual({ int32: '1123477881', uint32: '1123477881', float32: '123.456' });
  });

  it.each([
    { order: 'ABCDEFGH', words: [0x0102, 0x0304, 0x0506, 0x0708] },
    { order: 'GHEFCDAB', words: [0x0708, 0x0506, 0x0304, 0x0102] },
    { order: 'BADCFEHG', words: [0x0201, 0x0403, 0x0605, 0x0807] },
    { order: 'HGFEDCBA', words: [0x0807, 0x0605, 0x0403, 0x0201] },
  ])('finds int64 0x0102030405060708 in order $order', ({ order, words }) => {
    const row = find(interpretRegisters(words), 0, order);
    expect(valuesOf(row).int64).toBe('72623859790382856');
    expect(valuesOf(row).uint64).toBe('72623859790382856');
  });

  it('shows negative 32-bit and 64-bit integers', () => {
    const rows = interpretRegisters([0xffff, 0xffff, 0xffff, 0xfffe]);
    expect(valuesOf(find(rows, 0, 'ABCD'))).toMatchObject({ int32: '-1', uint32: '4294967295' });
    expect(valuesOf(find(rows, 0, 'ABCDEFGH'))).toMatchObject({ int64: '-2', uint64: '18446744073709551614' });
  });

  it.each([
    { count: 0, rows: 0 }, { count: 1, rows: 1 }, { count: 2, rows: 2 + 4 },
    { count: 4, rows: 4 + 3 * 4 + 1 * 4 }, { count: 10, rows: 10 + 9 * 4 + 7 * 4 },
  ])('slides every window over $count registers: $rows rows', ({ count, rows }) => {
    expect(interpretRegisters(new Array<number>(count).fill(0))).toHaveLength(rows);
  });
});

describe('formatInterpretations', () => {
  it('prints aligned sections per width', () => {
    const text = formatInterpretations(interpretRegisters([0x42f6, 0xe979], 100));
    const lines = text.split('\n');
    expect(lines[0]).toBe('16-bit registers');
    expect(lines[1]).toMatch(/^ {2}address {2}hex {5}uint16 {2}int16 {2}chars$/);
    expect(lines[2]).toMatch(/^ {2}100 +0x42F6 +17142 +17142 +"B."$/);
    expect(text).toContain('32-bit values (2 registers, every word/byte order)');
    expect(text).toMatch(/100 +ABCD +0x42F6 0xE979 +1123477881 +1123477881 +123\.456/);
    expect(text).not.toContain('64-bit');
    // every line of a section has the same width, so columns line up
    const section = lines.slice(lines.indexOf('32-bit values (2 registers, every word/byte order)') + 1);
    expect(new Set(section.map((l) => l.length)).size).toBe(1);
  });

  it('prints exponents for absurd floats and says when there is nothing', () => {
    const text = formatInterpretations(interpretRegisters([0x7f7f, 0xffff]));
    expect(text).toMatch(/3\.402823e\+38/);
    expect(formatInterpretations([])).toBe('no registers');
  });
});
