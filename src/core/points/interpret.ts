// Every plausible reading of raw registers, for `fieldgate read` without --type (pure).
import { REGISTER_ORDERS, orderLabel, registersToBytes, shortestFloat32 } from './word-order.js';

export interface Interpretation {
  type: 'uint16' | 'int16' | 'chars' | 'int32' | 'uint32' | 'float32' | 'int64' | 'uint64' | 'float64';
  text: string;
}

export interface InterpretationRow {
  /** Address of the first register of this reading. */
  address: number;
  /** Registers read together: 1, 2 or 4. */
  registers: 1 | 2 | 4;
  /** Wire order of the canonical bytes: AB for one register, ABCD/CDAB/BADC/DCBA, ABCDEFGH... */
  order: string;
  /** The registers as they came off the wire, e.g. 0x42F6 0xE979. */
  hex: string;
  values: Interpretation[];
}

/**
 * One row per register (hex, uint16, int16, chars), then one row per 2-register window and order
 * (int32, uint32, float32) and per 4-register window and order (int64, uint64, float64).
 */
export function interpretRegisters(words: readonly number[], startAddress = 0): InterpretationRow[] {
  const rows: InterpretationRow[] = [];
  words.forEach((word, i) => {
    const view = new DataView(registersToBytes([word], REGISTER_ORDERS[0]).buffer);
    rows.push({
      address: startAddress + i,
      registers: 1,
      order: 'AB',
      hex: hexOf([word]),
      values: [
        { type: 'uint16', text: String(view.getUint16(0)) },
        { type: 'int16', text: String(view.getInt16(0)) },
        { type: 'chars', text: charsOf(word) },
      ],
    });
  });
  for (const registers of [2, 4] as const) {
    for (let i = 0; i + registers <= words.length; i++) {
      const window = words.slice(i, i + registers);
      for (const order of REGISTER_ORDERS) {
        const view = new DataView(registersToBytes(window, order).buffer);
        const values: Interpretation[] =
          registers === 2
            ? [
                { type: 'int32', text: String(view.getInt32(0)) },
                { type: 'uint32', text: String(view.getUint32(0)) },
                { type: 'float32', text: formatFloat(shortestFloat32(view.getFloat32(0))) },
              ]
            : [
                { type: 'int64', text: view.getBigInt64(0).toString() },
                { type: 'uint64', text: view.getBigUint64(0).toString() },
                { type: 'float64', text: formatFloat(view.getFloat64(0)) },
              ];
        rows.push({ address: startAddress + i, registers, order: orderLabel(order, registers), hex: hexOf(window), values });
      }
    }
  }
  return rows;
}

/** A text table per width, aligned columns, e.g. for a terminal. */
export function formatInterpretations(rows: readonly InterpretationRow[]): string {
  const sections: string[] = [];
  const titles: Record<1 | 2 | 4, string> = {
    1: '16-bit registers',
    2: '32-bit values (2 registers, every word/byte order)',
    4: '64-bit values (4 registers, every word/byte order)',
  };
  for (const registers of [1, 2, 4] as const) {
    const group = rows.filter((row) => row.registers === registers);
    if (group.length === 0) continue;
    const header = ['address', ...(registers === 1 ? [] : ['order']), 'hex', ...group[0].values.map((v) => v.type)];
    const body = group.map((row) => [
      String(row.address),
      ...(registers === 1 ? [] : [row.order]),
      row.hex,
      ...row.values.map((v) => v.text),
    ]);
    sections.push(`${titles[registers]}\n${alignTable([header, ...body])}`);
  }
  return sections.length === 0 ? 'no registers' : sections.join('\n\n');
}

const TEXT_COLUMNS = new Set(['address', 'order', 'hex', 'chars']);

function alignTable(table: string[][]): string {
  const widths = table[0].map((_, col) => Math.max(...table.map((line) => line[col].length)));
  // Labels left-aligned, numbers right-aligned so their digits line up.
  const isText = (col: number) => TEXT_COLUMNS.has(table[0][col]);
  return table
    .map((line) => line.map((cell, col) => (isText(col) ? cell.padEnd(widths[col]) : cell.padStart(widths[col]))).join('  ').trimEnd())
    .map((line) => `  ${line}`)
    .join('\n');
}

function hexOf(words: readonly number[]): string {
  return words.map((w) => `0x${(w & 0xffff).toString(16).toUpperCase().padStart(4, '0')}`).join(' ');
}

/** Printable ASCII of a register's two bytes, dots elsewhere, quoted. */
function charsOf(word: number): string {
  const printable = (byte: number) => (byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : '.');
  return `"${printable((word >> 8) & 0xff)}${printable(word & 0xff)}"`;
}

/** Plain decimals for everyday magnitudes, exponent notation for the absurd ones garbage gives. */
function formatFloat(value: number): string {
  if (!Number.isFinite(value) || value === 0) return String(value);
  const magnitude = Math.abs(value);
  if (magnitude >= 1e15 || magnitude < 1e-6) return value.toExponential(6).replace(/\.?0+e/, 'e');
  return String(Number(value.toPrecision(15)));
}
