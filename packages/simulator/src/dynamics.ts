// Registers that change by themselves (pure: value is a function of elapsed time), so the demo moves.
import { isBitTable, type ByteOrder, type Table, type WordOrder } from 'fieldgate/workspace-kit';
import { encodeTyped, type SimValueType } from './encode.js';

export interface CounterBehaviour {
  /** Value at time 0 (default 0). */
  start?: number;
  /** Increments per second (default 1). */
  perSecond?: number;
  /** Wrap back to `start` after this value (default: the type's maximum). */
  max?: number;
}

export interface SineBehaviour {
  offset?: number;
  amplitude: number;
  periodSeconds: number;
}

export interface DynamicRegister {
  table: Table;
  address: number;
  /** Register tables: encoding of the value (default uint16). Bit tables ignore it. */
  type?: Exclude<SimValueType, 'string'>;
  wordOrder?: WordOrder;
  byteOrder?: ByteOrder;
  counter?: CounterBehaviour;
  sine?: SineBehaviour;
}

const TYPE_MAX: Record<string, number> = {
  int16: 32767, uint16: 65535, int32: 2147483647, uint32: 4294967295,
  int64: Number.MAX_SAFE_INTEGER, uint64: Number.MAX_SAFE_INTEGER,
};

/** Numeric value of the behaviour after `elapsedMs`. */
export function dynamicValue(spec: DynamicRegister, elapsedMs: number): number {
  const seconds = Math.max(0, elapsedMs) / 1000;
  const type = spec.type ?? 'uint16';
  const isFloat = type === 'float32' || type === 'float64';
  if (spec.sine !== undefined) {
    const { offset = 0, amplitude, periodSeconds } = spec.sine;
    const value = offset + amplitude * Math.sin((2 * Math.PI * seconds) / periodSeconds);
    return isFloat ? value : Math.round(value);
  }
  const { start = 0, perSecond = 1, max } = spec.counter ?? {};
  const steps = Math.floor(seconds * perSecond);
  const top = max ?? (isFloat ? Number.MAX_SAFE_INTEGER : TYPE_MAX[type]);
  const span = top - start + 1;
  return span > 0 ? start + (steps % span) : start;
}

/** Words (registers) or a single 0/1 (bit tables) to store for the behaviour at `elapsedMs`. */
export function dynamicWords(spec: DynamicRegister, elapsedMs: number): number[] {
  const value = dynamicValue(spec, elapsedMs);
  if (isBitTable(spec.table)) {
    const on = spec.sine !== undefined ? value > (spec.sine.offset ?? 0) : value % 2 === 1;
    return [on ? 1 : 0];
  }
  const encoded = encodeTyped({
    type: spec.type ?? 'uint16',
    value: clampToType(spec.type ?? 'uint16', value),
    wordOrder: spec.wordOrder,
    byteOrder: spec.byteOrder,
  });
  return encoded.ok ? encoded.words : [0];
}

function clampToType(type: string, value: number): number {
  const max = TYPE_MAX[type];
  if (max === undefined) return value;
  const min = type.startsWith('u') ? 0 : -max - 1;
  return Math.min(max, Math.max(min, value));
}
