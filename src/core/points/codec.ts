// Point codec (pure): registers/bits <-> engineering values for every type, order and scale.
import type { PointConfig } from '../config/site-types.js';
import { encodeNumber, encodeString, parseBoolean, type RawWords } from './codec-encode.js';
import { isBitTable, isWritableTable, rawRangeOf, widthOf, type PointValue, type Table } from './types.js';
import { registersToBytes, shortestFloat32 } from './word-order.js';

/** The result of one read: registers (holding/input) or bits (coil/discrete) from `start`; the bus's words are a Uint16Array. */
export interface ReadBlock<Words extends ArrayLike<number> = ArrayLike<number>> {
  table: Table;
  start: number;
  words?: Words;
  bits?: readonly boolean[];
}

/** One write to perform. 'bit' changes one bit of a register: the caller reads, modifies, writes. */
export type WriteOp =
  | { kind: 'registers'; address: number; words: number[] }
  | { kind: 'coil'; address: number; value: boolean }
  | { kind: 'bit'; address: number; bit: number; value: boolean };

/** `value` is what the device will hold after the write, as decode would report it. */
export type EncodeResult = { ok: true; write: WriteOp; value: PointValue } | { ok: false; error: string };

/** undefined: the device holds the point's "not implemented" value; the point is absent, not a number. */
export type DecodedValue = PointValue | undefined;

export interface PointCodec {
  readonly point: PointConfig;
  /** Registers (or bits, for coil/discrete) the point occupies. */
  readonly width: number;
  /** Throws if the block does not contain the point (a planning bug, not a device fault). */
  decode(block: ReadBlock): DecodedValue;
  /** Decode the point's own registers (exactly `width` of them), e.g. for a one-off CLI read. */
  decodeRegisters(words: ArrayLike<number>): DecodedValue;
  encode(value: unknown): EncodeResult;
}

export function isIdentityScale(point: Pick<PointConfig, 'scale' | 'offset'>): boolean {
  return point.scale === 1 && point.offset === 0;
}

/** Engineering values the point's type can represent after `raw * scale + offset`; undefined if not numeric. */
export function engineeringRange(point: Pick<PointConfig, 'type' | 'scale' | 'offset'>): { min: number; max: number } | undefined {
  const raw = rawRangeOf(point.type);
  if (!raw) return undefined;
  const a = raw.min * point.scale + point.offset;
  const b = raw.max * point.scale + point.offset;
  return { min: Math.min(a, b), max: Math.max(a, b) };
}

/** One read of consecutive registers or bits and, with a type, how to decode them (CLI and remote `read`). */
export interface PointSelection {
  unit: number;
  table: Table;
  address: number;
  /** Registers or bits to read. */
  count: number;
  /** Present with a type: the first value (the others follow it, `point` wide each). */
  point?: PointConfig;
  /** Values of `point`'s type to decode (1 without a type). */
  values: number;
}

/** The `index`-th of consecutive values of one type: the same point, moved along by its width. */
export function nthPoint(point: PointConfig, index: number): PointConfig {
  const step = isBitTable(point.table) ? 1 : widthOf(point.type, point.length);
  return { ...point, address: point.address + index * step };
}

/** Throws an Error naming the point when its config cannot be coded (normally caught by validation). */
export function compilePoint(point: PointConfig): PointCodec {
  checkCodable(point);
  return new CompiledPoint(point, widthOf(point.type, point.length));
}

// A class, not closures: the poller and the command service each hold one codec per point, and
// three closures with their context cost ~250 bytes more per point (2.5 MB at 100 x 50 points).
class CompiledPoint implements PointCodec {
  constructor(readonly point: PointConfig, readonly width: number) {}

  private get label(): string {
    return `point "${this.point.id}"`;
  }

  decodeRegisters(words: ArrayLike<number>): DecodedValue {
    if (words.length !== this.width) {
      throw new RangeError(`${this.label} needs ${this.width} register(s), got ${words.length}`);
    }
    return decodeWords(this.point, words);
  }

  decode(block: ReadBlock): DecodedValue {
    const { point, width } = this;
    if (block.table !== point.table) {
      throw new RangeError(`${this.label} is in the ${point.table} table, block is ${block.table}`);
    }
    const index = point.address - block.start;
    const data = isBitTable(point.table) ? block.bits : block.words;
    const length = data?.length ?? 0;
    if (!data || index < 0 || index + width > length) {
      throw new RangeError(
        `${this.label} (${point.table} ${point.address}, width ${width}) is outside the block ` +
          `${block.table} ${block.start}..${block.start + length - 1}`,
      );
    }
    if (isBitTable(point.table)) return Boolean((data as readonly boolean[])[index]);
    const words = data as ArrayLike<number>;
    if (width === 1) return decodeWord(point, words[index]);
    const own = new Array<number>(width);
    for (let i = 0; i < width; i++) own[i] = words[index + i];
    return decodeWords(point, own);
  }

  encode(value: unknown): EncodeResult {
    const { point } = this;
    const label = this.label;
    if (!point.writable) return { ok: false, error: `${label} is not writable` };
    if (!isWritableTable(point.table)) {
      return { ok: false, error: `${label} is in the read-only ${point.table} table` };
    }
    if (point.type === 'bool' || point.type === 'bit') {
      const parsed = parseBoolean(value);
      if (typeof parsed === 'string') return { ok: false, error: parsed };
      if (point.table === 'coil') return { ok: true, write: { kind: 'coil', address: point.address, value: parsed }, value: parsed };
      if (point.type === 'bit') {
        return { ok: true, write: { kind: 'bit', address: point.address, bit: point.bit, value: parsed }, value: parsed };
      }
      return { ok: true, write: { kind: 'registers', address: point.address, words: [parsed ? 1 : 0] }, value: parsed };
    }
    const words: RawWords = point.type === 'string' ? encodeString(point, value) : encodeNumber(point, value);
    if (typeof words === 'string') return { ok: false, error: words };
    const held = decodeWords(point, words);
    if (held === undefined) return { ok: false, error: `${label}: that value is the device's "not implemented" marker` };
    return { ok: true, write: { kind: 'registers', address: point.address, words }, value: held };
  }
}

function checkCodable(point: PointConfig): void {
  const label = `point "${point.id}"`;
  if (isBitTable(point.table) && point.type !== 'bool') {
    throw new Error(`${label}: a ${point.table} holds a single bit, type must be bool (got ${point.type})`);
  }
  if (point.type === 'bit' && !(Number.isInteger(point.bit) && point.bit >= 0 && point.bit <= 15)) {
    throw new Error(`${label}: bit must be an integer 0..15 (got ${point.bit})`);
  }
  if (point.type === 'string' && !(Number.isInteger(point.length) && point.length >= 1 && point.length <= 125)) {
    throw new Error(`${label}: string length must be 1..125 registers (got ${point.length})`);
  }
  if (!Number.isFinite(point.scale) || point.scale === 0) {
    throw new Error(`${label}: scale must be a finite non-zero number (got ${point.scale})`);
  }
  if (!Number.isFinite(point.offset)) throw new Error(`${label}: offset must be finite (got ${point.offset})`);
}

const textDecoder = new TextDecoder('utf-8');

/**
 * One register, without a byte copy and DataView: most points are 16-bit, and a poll of 100
 * devices x 50 points made that copy the daemon's largest source of garbage. The only 16-bit decoder.
 */
function decodeWord(point: PointConfig, word: number): DecodedValue {
  const w = word & 0xffff;
  if (point.type === 'int16' || point.type === 'uint16') {
    const ordered = point.byteOrder === 'big' ? w : ((w & 0xff) << 8) | (w >> 8);
    return scaled(point, point.type === 'int16' ? (ordered << 16) >> 16 : ordered);
  }
  return decodeWords(point, [w]);
}

/** Decode a point from exactly its own registers, in wire order. */
function decodeWords(point: PointConfig, words: ArrayLike<number>): DecodedValue {
  switch (point.type) {
    case 'bool':
      return (words[0] & 0xffff) !== 0;
    case 'bit':
      return ((words[0] >> point.bit) & 1) === 1;
    case 'int16':
    case 'uint16':
      return decodeWord(point, words[0]);
    case 'string': {
      // Strings run register by register; only the byte order inside a register applies.
      const bytes = registersToBytes(words, { wordOrder: 'big', byteOrder: point.byteOrder });
      const text = textDecoder.decode(bytes).replace(/^[\0 ]+|[\0 ]+$/g, '');
      return text === point.notImplemented ? undefined : text;
    }
    default:
      break;
  }
  const view = new DataView(registersToBytes(words, point).buffer);
  switch (point.type) {
    case 'int32': return scaled(point, view.getInt32(0));
    case 'uint32': return scaled(point, view.getUint32(0));
    case 'float32': return scaled(point, shortestFloat32(view.getFloat32(0)));
    case 'float64': return scaled(point, view.getFloat64(0));
    case 'int64': return scaled64(point, view.getBigInt64(0));
    case 'uint64': return scaled64(point, view.getBigUint64(0));
  }
}

function scaled(point: PointConfig, raw: number): number | undefined {
  if (raw === point.notImplemented) return undefined;
  if (isIdentityScale(point)) return raw;
  // Trim binary noise such as 123 * 0.1 = 12.300000000000001.
  return Number((raw * point.scale + point.offset).toPrecision(15));
}

/** Exact 64-bit integers stay exact: a decimal string once they pass 2^53. */
function scaled64(point: PointConfig, raw: bigint): DecodedValue {
  // Compared as bigints: near 2^63 a double cannot tell neighbouring raw values apart.
  if (typeof point.notImplemented === 'number' && raw === BigInt(point.notImplemented)) return undefined;
  if (!isIdentityScale(point)) return scaled(point, Number(raw));
  const asNumber = Number(raw);
  return Number.isSafeInteger(asNumber) ? asNumber : raw.toString();
}
