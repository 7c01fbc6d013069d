// Typed values -> register words for register maps (pure). Independent of the gateway codec on purpose:
// the simulator checks the codec, so it must not share its encoder.
import type { ByteOrder, WordOrder } from 'fieldgate/workspace-kit';

export const SIM_VALUE_TYPES = [
  'int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64', 'float32', 'float64', 'string',
] as const;
export type SimValueType = (typeof SIM_VALUE_TYPES)[number];

export interface TypedValue {
  type: SimValueType;
  value: number | string;
  wordOrder?: WordOrder;
  byteOrder?: ByteOrder;
  /** Registers a string occupies (2 characters each); default: just enough for the text. */
  registers?: number;
}

export type EncodeResult = { ok: true; words: number[] } | { ok: false; error: string };

const INT_RANGES: Record<string, [bigint, bigint]> = {
  int16: [-(2n ** 15n), 2n ** 15n - 1n],
  uint16: [0n, 2n ** 16n - 1n],
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
};

const BYTES_OF: Record<SimValueType, number> = {
  int16: 2, uint16: 2, int32: 4, uint32: 4, int64: 8, uint64: 8, float32: 4, float64: 8, string: 0,
};

export function encodeTyped(spec: TypedValue): EncodeResult {
  const bytes = toBigEndianBytes(spec);
  if (!bytes.ok) return bytes;
  return { ok: true, words: orderWords(bytes.bytes, spec.wordOrder ?? 'big', spec.byteOrder ?? 'big') };
}

function toBigEndianBytes(spec: TypedValue): { ok: true; bytes: Uint8Array } | { ok: false; error: string } {
  const { type, value } = spec;
  if (type === 'string') {
    if (typeof value !== 'string') return { ok: false, error: `string value expected, got ${typeof value}` };
    const text = Buffer.from(value, 'latin1');
    const registers = spec.registers ?? Math.max(1, Math.ceil(text.length / 2));
    if (text.length > registers * 2) return { ok: false, error: `"${value}" needs more than ${registers} registers` };
    const bytes = new Uint8Array(registers * 2);
    bytes.set(text);
    return { ok: true, bytes };
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    return { ok: false, error: `finite number expected for ${type}, got ${JSON.stringify(value)}` };
  }
  const view = new DataView(new ArrayBuffer(BYTES_OF[type]));
  if (type === 'float32') {
    if (Math.abs(value) > 3.4028234663852886e38) return { ok: false, error: `${value} out of float32 range` };
    view.setFloat32(0, value);
  } else if (type === 'float64') {
    view.setFloat64(0, value);
  } else {
    if (!Number.isInteger(value)) return { ok: false, error: `${type} needs an integer, got ${value}` };
    const big = BigInt(value);
    const [min, max] = INT_RANGES[type];
    if (big < min || big > max) return { ok: false, error: `${value} out of ${type} range ${min}..${max}` };
    const width = BYTES_OF[type] * 8;
    const unsigned = BigInt.asUintN(width, big);
    if (width === 64) view.setBigUint64(0, unsigned);
    else if (width === 32) view.setUint32(0, Number(unsigned));
    else view.setUint16(0, Number(unsigned));
  }
  return { ok: true, bytes: new Uint8Array(view.buffer) };
}

/** Big-endian bytes -> words in the requested word and byte order. */
function orderWords(bytes: Uint8Array, wordOrder: WordOrder, byteOrder: ByteOrder): number[] {
  const words: number[] = [];
  for (let i = 0; i < bytes.length; i += 2) {
    const hi = bytes[i];
    const lo = bytes[i + 1];
    words.push(byteOrder === 'big' ? (hi << 8) | lo : (lo << 8) | hi);
  }
  return wordOrder === 'big' ? words : words.reverse();
}

/** Registers a typed value occupies. */
export function registersOf(spec: TypedValue): number {
  if (spec.type !== 'string') return BYTES_OF[spec.type] / 2;
  return spec.registers ?? Math.max(1, Math.ceil(String(spec.value).length / 2));
}
