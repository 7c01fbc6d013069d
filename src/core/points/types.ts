// Value types a point can have and their register footprint and range (pure metadata).

export const TABLES = ['coil', 'discrete', 'holding', 'input'] as const;
export type Table = (typeof TABLES)[number];

export const VALUE_TYPES = [
  'bool', 'bit', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64', 'float32', 'float64', 'string',
] as const;
export type ValueType = (typeof VALUE_TYPES)[number];

/** Order of 16-bit words inside a multi-word value: big = most significant word first (ABCD). */
export type WordOrder = 'big' | 'little';
/** Order of the two bytes inside each 16-bit word: big = high byte first (AB). */
export type ByteOrder = 'big' | 'little';

/** A decoded value as reported to the cloud. 64-bit integers beyond 2^53 are decimal strings. */
export type PointValue = number | boolean | string;

export function isBitTable(table: Table): boolean {
  return table === 'coil' || table === 'discrete';
}

export function isWritableTable(table: Table): boolean {
  return table === 'coil' || table === 'holding';
}

/** Registers (or bits, for bit tables) one point of this type occupies. */
export function widthOf(type: ValueType, stringRegisters = 1): number {
  switch (type) {
    case 'bool':
    case 'bit':
    case 'int16':
    case 'uint16':
      return 1;
    case 'int32':
    case 'uint32':
    case 'float32':
      return 2;
    case 'int64':
    case 'uint64':
    case 'float64':
      return 4;
    case 'string':
      return stringRegisters;
  }
}

/** Raw (unscaled) range of an integer or float type; undefined for bool, bit and string. */
export function rawRangeOf(type: ValueType): { min: number; max: number } | undefined {
  switch (type) {
    case 'int16': return { min: -32768, max: 32767 };
    case 'uint16': return { min: 0, max: 65535 };
    case 'int32': return { min: -2147483648, max: 2147483647 };
    case 'uint32': return { min: 0, max: 4294967295 };
    case 'int64': return { min: -9223372036854775808, max: 9223372036854775807 };
    case 'uint64': return { min: 0, max: 18446744073709551615 };
    case 'float32': return { min: -3.4028234663852886e38, max: 3.4028234663852886e38 };
    case 'float64': return { min: -Number.MAX_VALUE, max: Number.MAX_VALUE };
    default: return undefined;
  }
}
