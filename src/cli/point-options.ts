// Command-line options that describe one point (table, address, type, orders, scale) for read/write.
import type { PointConfig } from '../core/config/site-types.js';
import { TABLES, VALUE_TYPES, widthOf, type ValueType } from '../core/points/types.js';
import { UsageError, integerOption } from './bus-options.js';
import type { PointSelection } from '../core/points/codec.js';

export const POINT_OPTIONS = {
  unit: { type: 'string' },
  table: { type: 'string' },
  address: { type: 'string' },
  count: { type: 'string' },
  type: { type: 'string' },
  bit: { type: 'string' },
  'word-order': { type: 'string' },
  'byte-order': { type: 'string' },
  scale: { type: 'string' },
  offset: { type: 'string' },
} as const;

export const POINT_OPTIONS_HELP = `  --unit N               unit (slave) id, 0-255
  --table coil|discrete|holding|input   (default holding)
  --address A            0-based register or bit address
  --count N              without --type: registers or bits to read (default 1);
                         with --type: values of that type, at consecutive addresses (default 1);
                         with --type string: the string's length in registers
  --type T               bool, bit, int16, uint16, int32, uint32, int64, uint64, float32, float64, string
  --bit N                bit number 0-15 for --type bit
  --word-order big|little  --byte-order big|little   (default big/big = ABCD)
  --scale X --offset Y   engineering = raw * scale + offset`;

export interface PointOptionValues {
  unit?: string;
  table?: string;
  address?: string;
  count?: string;
  type?: string;
  bit?: string;
  'word-order'?: string;
  'byte-order'?: string;
  scale?: string;
  offset?: string;
}

function choice<T extends string>(name: string, text: string | undefined, allowed: readonly T[], fallback: T): T {
  if (text === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(text)) throw new UsageError(`--${name}: "${text}" must be one of ${allowed.join(', ')}`);
  return text as T;
}

function finite(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) throw new UsageError(`--${name}: "${text}" is not a number`);
  return value;
}

export type { PointSelection } from '../core/points/codec.js';

export function pointFromOptions(values: PointOptionValues): PointSelection {
  const unit = integerOption('unit', values.unit, undefined, 0, 255);
  const table = choice('table', values.table, TABLES, 'holding');
  const address = integerOption('address', values.address, undefined, 0, 65535);
  const type = values.type === undefined ? undefined : choice<ValueType>('type', values.type, VALUE_TYPES, 'uint16');
  const isBits = table === 'coil' || table === 'discrete';
  const count = integerOption('count', values.count, 1, 1, isBits ? 2000 : 125);
  if (type === undefined) return { unit, table, address, count, values: 1 };
  const point: PointConfig = {
    id: 'value', table, address, type,
    bit: integerOption('bit', values.bit, 0, 0, 15),
    length: type === 'string' ? count : 1,
    wordOrder: choice('word-order', values['word-order'], ['big', 'little'] as const, 'big'),
    byteOrder: choice('byte-order', values['byte-order'], ['big', 'little'] as const, 'big'),
    scale: finite('scale', values.scale, 1),
    offset: finite('offset', values.offset, 0),
    writable: table === 'coil' || table === 'holding',
    report: { mode: 'change', deadband: 0, deadbandKind: 'absolute', maxSilenceMs: 0 },
  };
  if (isBits || type === 'string') return { unit, table, address, count, point, values: isBits ? count : 1 };
  const registers = count * widthOf(type, 1);
  if (registers > 125) throw new UsageError(`--count: ${count} values of ${type} need ${registers} registers, more than the 125 one read can fetch`);
  return { unit, table, address, count: registers, point, values: count };
}
