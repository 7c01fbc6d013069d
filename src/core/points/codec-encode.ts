// Value -> registers for the codec (pure). Each function returns the registers or an error message.
import type { PointConfig } from '../config/site-types.js';
import { rawRangeOf, type ValueType } from './types.js';
import { bytesToRegisters } from './word-order.js';

/** Registers in wire order, or an error message. */
export type RawWords = number[] | string;

const FLOAT32_MAX = 3.4028234663852886e38;
const INT64_RANGE: Record<'int64' | 'uint64', { min: bigint; max: bigint }> = {
  int64: { min: -(2n ** 63n), max: 2n ** 63n - 1n },
  uint64: { min: 0n, max: 2n ** 64n - 1n },
};

/** Readable description of an unexpected input for error messages. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return `${JSON.stringify(value)} (string)`;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `${String(value)} (${typeof value})`;
}

/** true/false, or the numbers 0/1; anything else is an error message. */
export function parseBoolean(value: unknown): boolean | string {
  if (typeof value === 'boolean') return value;
  if (value === 0 || value === 1) return value === 1;
  return `expected true/false (or 0/1), got ${describe(value)}`;
}

export function encodeString(point: PointConfig, value: unknown): RawWords {
  if (typeof value !== 'string') return `expected a string, got ${describe(value)}`;
  const text = new TextEncoder().encode(value);
  const capacity = point.length * 2;
  if (text.length > capacity) {
    return `text of ${text.length} bytes does not fit ${point.length} register(s) (${capacity} bytes)`;
  }
  const bytes = new Uint8Array(capacity); // NUL padded
  bytes.set(text);
  return bytesToRegisters(bytes, { wordOrder: 'big', byteOrder: point.byteOrder });
}

/** Encode an int/uint/float point: check type, bounds, invert scale/offset, round integers. */
export function encodeNumber(point: PointConfig, value: unknown): RawWords {
  const type = point.type;
  const identity = point.scale === 1 && point.offset === 0;
  // Decoded 64-bit values beyond 2^53 are decimal strings: accept them back, exactly.
  if ((type === 'int64' || type === 'uint64') && identity && typeof value === 'string' && /^-?\d+$/.test(value)) {
    const bounds = checkMinMax(point, Number(value));
    return bounds ?? encodeBigInt(point, type, BigInt(value), value);
  }
  if (typeof value !== 'number') return `expected a number, got ${describe(value)}`;
  if (!Number.isFinite(value)) return `value ${value} is not a finite number`;
  const bounds = checkMinMax(point, value);
  if (bounds) return bounds;

  const raw = (value - point.offset) / point.scale;
  switch (type) {
    case 'float32': {
      if (!(Math.abs(raw) <= FLOAT32_MAX)) return outOfRange(point, value, raw);
      const view = new DataView(new ArrayBuffer(4));
      view.setFloat32(0, raw);
      return toWords(point, view);
    }
    case 'float64': {
      if (!Number.isFinite(raw)) return outOfRange(point, value, raw);
      const view = new DataView(new ArrayBuffer(8));
      view.setFloat64(0, raw);
      return toWords(point, view);
    }
    case 'int64':
    case 'uint64':
      return encodeBigInt(point, type, BigInt(roundHalfAway(raw)), String(value));
    default:
      return encodeSmallInt(point, value, roundHalfAway(raw));
  }
}

function encodeSmallInt(point: PointConfig, value: number, raw: number): RawWords {
  const range = rawRangeOf(point.type);
  if (!range || raw < range.min || raw > range.max) return outOfRange(point, value, raw);
  const wide = point.type === 'int32' || point.type === 'uint32';
  const view = new DataView(new ArrayBuffer(wide ? 4 : 2));
  if (wide) view.setUint32(0, raw >>> 0);
  else view.setUint16(0, raw & 0xffff);
  return toWords(point, view);
}

function encodeBigInt(point: PointConfig, type: 'int64' | 'uint64', raw: bigint, shown: string): RawWords {
  const range = INT64_RANGE[type];
  if (raw < range.min || raw > range.max) {
    const rawNote = point.scale === 1 && point.offset === 0 ? '' : ` (raw ${raw})`;
    return `value ${shown}${rawNote} is outside ${type} range ${range.min}..${range.max}`;
  }
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt.asUintN(64, raw));
  return toWords(point, view);
}

function toWords(point: PointConfig, view: DataView): number[] {
  return bytesToRegisters(new Uint8Array(view.buffer), point);
}

function checkMinMax(point: PointConfig, value: number): string | undefined {
  if (point.min !== undefined && value < point.min) return `value ${value} is below the minimum ${point.min}`;
  if (point.max !== undefined && value > point.max) return `value ${value} is above the maximum ${point.max}`;
  return undefined;
}

function outOfRange(point: PointConfig, value: number, raw: number): string {
  const type: ValueType = point.type;
  const range = rawRangeOf(type);
  const rawText = range ? `${range.min}..${range.max}` : '';
  if (point.scale === 1 && point.offset === 0) return `value ${value} is outside ${type} range ${rawText}`;
  const a = (range?.min ?? 0) * point.scale + point.offset;
  const b = (range?.max ?? 0) * point.scale + point.offset;
  return (
    `value ${value} is outside ${Math.min(a, b)}..${Math.max(a, b)} ` +
    `(raw ${raw} for ${type} range ${rawText} with scale ${point.scale}, offset ${point.offset})`
  );
}

/** Round to the nearest integer, halves away from zero (-2.5 -> -3), like most device tools. */
function roundHalfAway(x: number): number {
  return Math.sign(x) * Math.round(Math.abs(x));
}
