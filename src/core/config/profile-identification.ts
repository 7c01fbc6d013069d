// A profile's `identification:` block: the registers that tell its model from others (pure).
import { VALUE_TYPES, type ValueType } from '../points/types.js';
import { Fields, isMapping, joinPath } from './fields.js';
import { describeValue } from './issues.js';
import { REPORT_DEFAULTS, readPoint } from './points.js';
import type { IdentificationRegister, ProfileIdentification } from './profile-types.js';
import type { ConfigIssue } from './site-types.js';

/** Exact values only: a float identification code would match or not by rounding. */
const IDENTIFYING_TYPES: readonly ValueType[] = ['uint16', 'int16', 'uint32', 'int32', 'string'];
/** A handful of registers tells a model; more is a copy of the point map. */
const MAX_REGISTERS = 8;
const MAX_VALUES = 64;
/** Where the register is and how it is coded; nothing about reporting or writing applies here. */
const REGISTER_KEYS = ['table', 'address', 'type', 'length', 'wordOrder', 'byteOrder'];

function readValues(f: Fields, type: ValueType | undefined): (number | string)[] | undefined {
  const list = f.list('values', { required: true });
  if (!list) return undefined;
  if (list.length === 0 || list.length > MAX_VALUES) {
    f.report('values', `must list 1 to ${MAX_VALUES} values the model shows (got ${list.length})`);
    return undefined;
  }
  let ok = true;
  list.forEach((value, index) => {
    const wantString = type === 'string';
    const good = wantString ? typeof value === 'string' && value.length > 0 : Number.isInteger(value);
    if (!good) {
      f.issues.push({ path: joinPath(f.at('values'), index), message: `must be ${wantString ? 'a non-empty string' : 'an integer'} for type ${type ?? '?'} (got ${describeValue(value)})` });
      ok = false;
    }
  });
  return ok ? (list as (number | string)[]) : undefined;
}

function readRegister(raw: unknown, path: string, index: number, issues: ConfigIssue[]): IdentificationRegister | undefined {
  const f = Fields.of(raw, path, issues);
  if (!f) return undefined;
  const before = issues.length;
  const label = f.string('label');
  const type = isMapping(raw) && typeof raw.type === 'string' ? (raw.type as ValueType) : undefined;
  if (type !== undefined && (VALUE_TYPES as readonly string[]).includes(type) && !IDENTIFYING_TYPES.includes(type)) f.report('type', `must be one of ${IDENTIFYING_TYPES.join(', ')} (got ${describeValue(type)}): identification compares exact values`);
  if (isMapping(raw) && (raw.table === 'coil' || raw.table === 'discrete')) f.report('table', `must be holding or input (got ${describeValue(raw.table)})`);
  const values = readValues(f, type);
  const readAlone = f.has('readAlone') ? f.take('readAlone') : undefined;
  if (readAlone !== undefined && typeof readAlone !== 'boolean') f.report('readAlone', `must be true or false (got ${describeValue(readAlone)})`);
  const where: Record<string, unknown> = {};
  for (const key of REGISTER_KEYS) if (f.has(key)) where[key] = f.take(key);
  f.rejectUnknownKeys();
  if (!f.has('type')) f.report('type', 'required: the type the document gives the register');
  // The register itself is checked as a point would be (table, address, type, length, orders).
  const point = readPoint({ ...where, id: `identification_${index}` }, path, issues, { wordOrder: 'big', byteOrder: 'big', report: REPORT_DEFAULTS });
  if (issues.length > before || !point || !values || label === undefined) return undefined;
  return { point, values, label, ...(readAlone === true ? { readAlone } : {}) };
}

/** Absent block: undefined, no issue. Otherwise every problem is reported with its path. */
export function readIdentification(profile: Fields): ProfileIdentification | undefined {
  if (!profile.has('identification')) {
    profile.take('identification');
    return undefined;
  }
  const f = profile.section('identification');
  if (!f) return undefined;
  const list = f.list('registers', { required: true });
  f.rejectUnknownKeys();
  if (!list) return undefined;
  if (list.length === 0 || list.length > MAX_REGISTERS) {
    f.report('registers', `must list 1 to ${MAX_REGISTERS} registers (got ${list.length})`);
    return undefined;
  }
  const registers = list.map((raw, index) => readRegister(raw, joinPath(f.at('registers'), index), index, f.issues));
  if (registers.some((r) => r === undefined)) return undefined;
  return { registers: registers as IdentificationRegister[] };
}
