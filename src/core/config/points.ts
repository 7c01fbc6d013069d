// One point of a device: where it lives (table, address), how to decode it, and how to report it.
import { engineeringRange } from '../points/codec.js';
import { isBitTable, isWritableTable, rawRangeOf, TABLES, VALUE_TYPES, widthOf } from '../points/types.js';
import type { ByteOrder, ValueType, WordOrder } from '../points/types.js';
import { Fields } from './fields.js';
import { describeValue } from './issues.js';
import type { ConfigIssue, PointConfig, ReportConfig } from './site-types.js';

export const REPORT_DEFAULTS: ReportConfig = { mode: 'change', deadband: 0, deadbandKind: 'absolute', maxSilenceMs: 0 };
export const ORDERS = ['big', 'little'] as const;
const ID_PATTERN = /^[A-Za-z0-9_]{1,64}$/;
const ID_TEXT = 'must be 1 to 64 letters, digits or "_"';
const LAST_ADDRESS = 65535;
/** FC3/FC4 ceiling: a longer string could never be read. */
const MAX_REGISTERS_PER_READ = 125;

/** What a device passes down to each of its points (device-level `wordOrder`, `byteOrder`, `report`). */
export interface PointDefaults {
  wordOrder: WordOrder;
  byteOrder: ByteOrder;
  report: ReportConfig;
}

/** Reads the optional `report` mapping of `parent`, filling gaps from `defaults`. */
export function readReport(parent: Fields, defaults: ReportConfig): ReportConfig | undefined {
  const f = parent.section('report');
  if (!f) return undefined;
  const mode = f.choice('mode', ['change', 'always'] as const, { default: defaults.mode });
  const deadband = f.number('deadband', { default: defaults.deadband, min: 0 });
  const deadbandKind = f.choice('deadbandKind', ['absolute', 'percent'] as const, { default: defaults.deadbandKind });
  const maxSilenceMs = f.duration('maxSilenceMs', { default: defaults.maxSilenceMs, min: 0 });
  f.rejectUnknownKeys();
  if (mode === undefined || deadband === undefined || deadbandKind === undefined || maxSilenceMs === undefined) return undefined;
  return { mode, deadband, deadbandKind, maxSilenceMs };
}

function isNumeric(type: ValueType): boolean {
  return rawRangeOf(type) !== undefined;
}

/** Readable number for messages: no float noise such as 6553.500000000001. */
export function show(value: number): string {
  return String(Number(value.toPrecision(12)));
}

function describeScaling(type: ValueType, scale: number, offset: number): string {
  const parts: string[] = [type];
  if (scale !== 1) parts.push(`scale ${show(scale)}`);
  if (offset !== 0) parts.push(`offset ${show(offset)}`);
  return parts.length === 1 ? type : `${parts[0]} with ${parts.slice(1).join(' and ')}`;
}

function checkBounds(f: Fields, type: ValueType, scale: number, offset: number): { min?: number; max?: number } | undefined {
  const min = f.number('min', { optional: true });
  const max = f.number('max', { optional: true });
  if (min === undefined && max === undefined) return f.has('min') || f.has('max') ? undefined : {};
  const range = engineeringRange({ type, scale, offset });
  if (!range) {
    for (const key of ['min', 'max'] as const) if (f.has(key)) f.report(key, `only numeric types have bounds (type is ${type})`);
    return undefined;
  }
  let ok = true;
  for (const [key, value] of [['min', min], ['max', max]] as const) {
    if (value !== undefined && (value < range.min || value > range.max)) {
      f.report(key, `${show(value)} is outside ${show(range.min)}..${show(range.max)}, the range of ${describeScaling(type, scale, offset)}`);
      ok = false;
    }
  }
  if (ok && min !== undefined && max !== undefined && min > max) {
    f.report('max', `must be >= min (${show(min)})`);
    ok = false;
  }
  if (!ok || (f.has('min') && min === undefined) || (f.has('max') && max === undefined)) return undefined;
  return { ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) };
}

/** Reads the integer key only a given type may carry (`bit` for bit, `length` for string). */
function typeSpecific(f: Fields, key: 'bit' | 'length', wanted: boolean, type: ValueType, max: number): number | undefined {
  if (wanted) return f.integer(key, { min: key === 'bit' ? 0 : 1, max });
  if (f.has(key)) f.report(key, `only for type ${key === 'bit' ? 'bit' : 'string'} (type is ${type})`);
  f.take(key);
  return key === 'bit' ? 0 : 1;
}

export function readPoint(raw: unknown, path: string, issues: ConfigIssue[], defaults: PointDefaults): PointConfig | undefined {
  const f = Fields.of(raw, path, issues);
  if (!f) return undefined;
  const before = issues.length;
  const id = f.string('id', { pattern: ID_PATTERN, patternText: ID_TEXT, name: true });
  const table = f.choice('table', TABLES, { what: 'table' });
  const address = f.integer('address', { min: 0, max: LAST_ADDRESS });
  const type = f.choice('type', VALUE_TYPES, { what: 'type', default: table && isBitTable(table) ? 'bool' : 'uint16' });
  const wordOrder = f.choice('wordOrder', ORDERS, { default: defaults.wordOrder });
  const byteOrder = f.choice('byteOrder', ORDERS, { default: defaults.byteOrder });
  const scale = f.number('scale', { default: 1 });
  const offset = f.number('offset', { default: 0 });
  const writable = f.boolean('writable', { default: false });
  const report = readReport(f, defaults.report);
  const extras = readCodecExtras(f, type, writable);
  if (type === undefined) {
    for (const key of ['bit', 'length', 'min', 'max']) f.take(key);
    f.rejectUnknownKeys();
    return undefined;
  }
  const bit = typeSpecific(f, 'bit', type === 'bit', type, 15);
  const length = typeSpecific(f, 'length', type === 'string', type, MAX_REGISTERS_PER_READ);
  if (scale === 0) f.report('scale', 'must not be 0');
  if (!isNumeric(type)) {
    if (f.has('scale') && scale !== 1) f.report('scale', `only numeric types can be scaled (type is ${type})`);
    if (f.has('offset') && offset !== 0) f.report('offset', `only numeric types can be scaled (type is ${type})`);
  }
  const scalingOk = scale !== undefined && scale !== 0 && offset !== undefined;
  const bounds = scalingOk ? checkBounds(f, type, scale, offset) : undefined;
  if (!scalingOk) for (const key of ['min', 'max']) f.take(key);
  if (table !== undefined) {
    if (isBitTable(table) && type !== 'bool') f.report('type', `${type} needs a register table (holding or input), not ${table}`);
    if (writable && !isWritableTable(table)) f.report('writable', `the ${table} table is read-only`);
  }
  const width = widthOf(type, length ?? 1);
  if (address !== undefined && length !== undefined && address + width > LAST_ADDRESS + 1) {
    f.report('address', `${type} of ${width} registers at ${address} runs past the last address ${LAST_ADDRESS}`);
  }
  f.rejectUnknownKeys();
  if (issues.length > before) return undefined;
  return {
    id: id!, table: table!, address: address!, type, bit: bit!, length: width, wordOrder: wordOrder!,
    byteOrder: byteOrder!, scale: scale!, offset: offset!, writable: writable!, ...bounds, report: report!, ...extras,
  };
}

const INTEGER_TYPES: ReadonlySet<ValueType> = new Set(['int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64']);

/** A string's only "not implemented" value is "" (all registers NUL, as SunSpec defines it). */
function emptyStringOnly(f: Fields): '' | undefined {
  const value = f.take('notImplemented');
  if (value === undefined || value === '') return value;
  f.report('notImplemented', `for a string only "" (every register NUL) (got ${describeValue(value)})`);
  return undefined;
}

/** `unit`, `scaleFactor` and `notImplemented` (SunSpec and similar maps); the scale factor's target is checked per device. */
function readCodecExtras(f: Fields, type: ValueType | undefined, writable: boolean | undefined): Pick<PointConfig, 'unit' | 'scaleFactor' | 'notImplemented'> {
  const unit = f.string('unit', { optional: true });
  const scaleFactor = f.string('scaleFactor', { optional: true, pattern: ID_PATTERN, patternText: ID_TEXT });
  const notImplemented = type === 'string' ? emptyStringOnly(f) : f.number('notImplemented', { optional: true });
  if (unit !== undefined && unit.length > 32) f.report('unit', 'must be at most 32 characters');
  if (type !== undefined && scaleFactor !== undefined && rawRangeOf(type) === undefined) {
    f.report('scaleFactor', `only numeric types can be scaled (type is ${type})`);
  }
  if (scaleFactor !== undefined && writable === true) f.report('scaleFactor', 'a point scaled by another register cannot be writable');
  if (type !== undefined && type !== 'string' && typeof notImplemented === 'number') {
    const range = rawRangeOf(type);
    if (!INTEGER_TYPES.has(type)) f.report('notImplemented', `only integer types have a "not implemented" value (type is ${type})`);
    else if (!Number.isInteger(notImplemented) || notImplemented < range!.min || notImplemented > range!.max) {
      f.report('notImplemented', `must be a raw ${type} value ${show(range!.min)}..${show(range!.max)} (got ${show(notImplemented)})`);
    }
  }
  return {
    ...(unit !== undefined ? { unit } : {}),
    ...(scaleFactor !== undefined ? { scaleFactor } : {}),
    ...(notImplemented !== undefined ? { notImplemented } : {}),
  };
}
