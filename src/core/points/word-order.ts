// Register <-> byte reordering for multi-register values (pure). Bytes are kept in canonical
// big-endian order (A = most significant) so DataView can read them with littleEndian=false.
import type { ByteOrder, WordOrder } from './types.js';

export interface RegisterOrder {
  wordOrder: WordOrder;
  byteOrder: ByteOrder;
}

/** The four orders, in the order users usually try them. */
export const REGISTER_ORDERS: readonly RegisterOrder[] = [
  { wordOrder: 'big', byteOrder: 'big' },
  { wordOrder: 'little', byteOrder: 'big' },
  { wordOrder: 'big', byteOrder: 'little' },
  { wordOrder: 'little', byteOrder: 'little' },
];

/** Canonical big-endian bytes of a value from its registers as they came off the wire. */
export function registersToBytes(words: ArrayLike<number>, order: RegisterOrder): Uint8Array {
  const count = words.length;
  const bytes = new Uint8Array(count * 2);
  for (let i = 0; i < count; i++) {
    // With little word order the least significant word comes first on the wire.
    const word = words[order.wordOrder === 'big' ? i : count - 1 - i] & 0xffff;
    const high = word >> 8;
    const low = word & 0xff;
    bytes[i * 2] = order.byteOrder === 'big' ? high : low;
    bytes[i * 2 + 1] = order.byteOrder === 'big' ? low : high;
  }
  return bytes;
}

/** Registers to put on the wire for canonical big-endian bytes (inverse of registersToBytes). */
export function bytesToRegisters(bytes: Uint8Array, order: RegisterOrder): number[] {
  const count = bytes.length / 2;
  const words = new Array<number>(count);
  for (let i = 0; i < count; i++) {
    const high = bytes[i * 2];
    const low = bytes[i * 2 + 1];
    const word = order.byteOrder === 'big' ? (high << 8) | low : (low << 8) | high;
    words[order.wordOrder === 'big' ? i : count - 1 - i] = word;
  }
  return words;
}

/**
 * The conventional name of an order for a value of `registers` registers: the letters of the
 * canonical bytes in wire order (ABCD, CDAB, BADC, DCBA for 32 bits; ABCDEFGH... for 64 bits).
 */
export function orderLabel(order: RegisterOrder, registers: number): string {
  const letters = 'ABCDEFGHIJKLMNOP'.slice(0, registers * 2);
  let label = '';
  for (let i = 0; i < registers; i++) {
    const word = order.wordOrder === 'big' ? i : registers - 1 - i;
    const high = letters[word * 2];
    const low = letters[word * 2 + 1];
    label += order.byteOrder === 'big' ? high + low : low + high;
  }
  return label;
}

/** Shortest decimal that reads back as the same float32 (123.456, not 123.45600128173828). */
export function shortestFloat32(value: number): number {
  if (!Number.isFinite(value) || value === 0) return value;
  for (let digits = 1; digits <= 9; digits++) {
    const candidate = Number(value.toPrecision(digits));
    if (Math.fround(candidate) === value) return candidate;
  }
  return value;
}
