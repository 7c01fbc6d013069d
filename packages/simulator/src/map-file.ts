// Register-map file (YAML or JSON text) -> validated unit specs, with every problem reported by path (pure).
import { parse as parseYaml } from 'yaml';
import { TABLES, isBitTable, type Table } from 'fieldgate/workspace-kit';
import { SIM_VALUE_TYPES, encodeTyped, type SimValueType } from './encode.js';
import type { DynamicRegister } from './dynamics.js';
import { validateFault, type UnitFault } from './faults.js';
import { FULL_ADDRESS_SPACE, type TableSizes } from './memory.js';

export interface InitialValues {
  table: Table;
  address: number;
  /** Registers, or 0/1 for bit tables. */
  words: number[];
  /** Held only for a read of one register alone (what a longer read there returns is the table's). */
  alone?: boolean;
}

export interface SimUnitSpec {
  unit: number;
  name: string;
  sizes: TableSizes;
  values: InitialValues[];
  dynamic: DynamicRegister[];
  fault?: UnitFault;
}

export interface SimMap {
  units: SimUnitSpec[];
}

export type SimMapResult = { ok: true; map: SimMap } | { ok: false; problems: string[] };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isInt = (v: unknown, min: number, max: number): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

const UNIT_KEYS = ['name', 'size', 'dynamic', 'faults', ...TABLES];

export function parseSimMap(text: string): SimMapResult {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    return { ok: false, problems: [`not valid YAML/JSON: ${(err as Error).message}`] };
  }
  return validateSimMap(doc);
}

export function validateSimMap(doc: unknown): SimMapResult {
  if (!isObj(doc) || !isObj(doc.units)) return { ok: false, problems: ['units: required mapping of unit id -> tables'] };
  const problems: string[] = [];
  const units: SimUnitSpec[] = [];
  for (const [key, body] of Object.entries(doc.units)) {
    const path = `units.${key}`;
    const unit = Number(key);
    if (!isInt(unit, 1, 255)) {
      problems.push(`${path}: unit id must be 1..255 (1..247 on RTU)`);
      continue;
    }
    const spec = parseUnit(unit, body ?? {}, path, problems);
    if (spec !== undefined) units.push(spec);
  }
  if (units.length === 0 && problems.length === 0) problems.push('units: at least one unit is needed');
  return problems.length > 0 ? { ok: false, problems } : { ok: true, map: { units } };
}

function parseUnit(unit: number, body: unknown, path: string, problems: string[]): SimUnitSpec | undefined {
  if (!isObj(body)) {
    problems.push(`${path}: must be a mapping with tables (${TABLES.join(', ')})`);
    return undefined;
  }
  for (const key of Object.keys(body)) if (!UNIT_KEYS.includes(key)) problems.push(`${path}.${key}: unknown key (known: ${UNIT_KEYS.join(', ')})`);
  const sizes = parseSizes(body.size, `${path}.size`, problems);
  const values: InitialValues[] = [];
  for (const table of TABLES) {
    if (body[table] !== undefined) values.push(...parseTable(table, body[table], `${path}.${table}`, problems));
  }
  for (const v of values) {
    const size = sizes[v.table] ?? FULL_ADDRESS_SPACE;
    if (v.address + v.words.length > size) problems.push(`${path}.${v.table}: address ${v.address} (+${v.words.length}) beyond the table size ${size}`);
  }
  const dynamic = parseDynamic(body.dynamic, `${path}.dynamic`, problems);
  let fault: UnitFault | undefined;
  if (body.faults !== undefined) {
    const faultProblems = validateFault(body.faults, `${path}.faults`);
    problems.push(...faultProblems);
    if (faultProblems.length === 0) fault = body.faults as UnitFault;
  }
  const name = typeof body.name === 'string' ? body.name : `unit ${unit}`;
  return { unit, name, sizes, values, dynamic, fault };
}

function parseSizes(value: unknown, path: string, problems: string[]): TableSizes {
  if (value === undefined) return {};
  if (!isObj(value)) {
    problems.push(`${path}: must map table -> number of addresses`);
    return {};
  }
  const sizes: TableSizes = {};
  for (const [table, size] of Object.entries(value)) {
    if (!TABLES.includes(table as Table)) problems.push(`${path}.${table}: unknown table (known: ${TABLES.join(', ')})`);
    else if (!isInt(size, 1, FULL_ADDRESS_SPACE)) problems.push(`${path}.${table}: must be 1..${FULL_ADDRESS_SPACE}`);
    else sizes[table as Table] = size;
  }
  return sizes;
}

function parseTable(table: Table, value: unknown, path: string, problems: string[]): InitialValues[] {
  // A single entry written without the list.
  if (isObj(value) && ('address' in value || 'start' in value)) return parseEntry(table, value, path, problems);
  // Short form: { 0: 42, 1: 7 }.
  if (isObj(value)) {
    return Object.entries(value).flatMap(([addr, v]) => {
      const address = Number(addr);
      if (isInt(address, 0, 65535)) return [{ table, address, words: [rawWord(table, v, `${path}.${addr}`, problems)] }];
      problems.push(`${path}.${addr}: must be an address 0..65535`);
      return [];
    });
  }
  if (!Array.isArray(value)) {
    problems.push(`${path}: must be a list of entries or a mapping address -> value`);
    return [];
  }
  return value.flatMap((entry, i) => parseEntry(table, entry, `${path}[${i}]`, problems));
}

function parseEntry(table: Table, entry: unknown, path: string, problems: string[]): InitialValues[] {
  if (!isObj(entry)) {
    problems.push(`${path}: must be { address, value }, { start, values } or { address, type, value }`);
    return [];
  }
  if (entry.start !== undefined || entry.values !== undefined) {
    if (!isInt(entry.start, 0, 65535)) problems.push(`${path}.start: must be an address 0..65535`);
    if (!Array.isArray(entry.values)) problems.push(`${path}.values: must be a list`);
    if (!isInt(entry.start, 0, 65535) || !Array.isArray(entry.values)) return [];
    const words = entry.values.map((v, i) => rawWord(table, v, `${path}.values[${i}]`, problems));
    return [{ table, address: entry.start, words }];
  }
  if (!isInt(entry.address, 0, 65535)) {
    problems.push(`${path}.address: must be an address 0..65535`);
    return [];
  }
  if (entry.type === undefined) return [{ table, address: entry.address, words: [rawWord(table, entry.value, `${path}.value`, problems)] }];
  if (isBitTable(table)) {
    problems.push(`${path}.type: typed values only fit register tables (holding, input)`);
    return [];
  }
  if (!SIM_VALUE_TYPES.includes(entry.type as SimValueType)) {
    problems.push(`${path}.type: unknown type "${String(entry.type)}" (known: ${SIM_VALUE_TYPES.join(', ')})`);
    return [];
  }
  const orders = parseOrders(entry, path, problems);
  const encoded = encodeTyped({
    type: entry.type as SimValueType,
    value: entry.value as number | string,
    registers: isInt(entry.registers, 1, 125) ? entry.registers : undefined,
    ...orders,
  });
  if (!encoded.ok) {
    problems.push(`${path}.value: ${encoded.error}`);
    return [];
  }
  return [{ table, address: entry.address, words: encoded.words }];
}

function parseOrders(entry: Obj, path: string, problems: string[]): Pick<DynamicRegister, 'wordOrder' | 'byteOrder'> {
  const out: Pick<DynamicRegister, 'wordOrder' | 'byteOrder'> = {};
  for (const key of ['wordOrder', 'byteOrder'] as const) {
    const v = entry[key];
    if (v === undefined) continue;
    if (v === 'big' || v === 'little') out[key] = v;
    else problems.push(`${path}.${key}: must be big or little`);
  }
  return out;
}

function rawWord(table: Table, value: unknown, path: string, problems: string[]): number {
  if (isBitTable(table)) {
    if (value === true || value === 1) return 1;
    if (value === false || value === 0) return 0;
    problems.push(`${path}: a ${table} value must be true/false or 1/0`);
    return 0;
  }
  if (isInt(value, -32768, 65535)) return value & 0xffff;
  problems.push(`${path}: a register value must be an integer -32768..65535 (use type: for wider values)`);
  return 0;
}

function parseDynamic(value: unknown, path: string, problems: string[]): DynamicRegister[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problems.push(`${path}: must be a list`);
    return [];
  }
  const out: DynamicRegister[] = [];
  value.forEach((entry, i) => {
    const p = `${path}[${i}]`;
    const before = problems.length;
    if (!isObj(entry)) {
      problems.push(`${p}: must be { table, address, counter | sine }`);
      return;
    }
    if (!TABLES.includes(entry.table as Table)) problems.push(`${p}.table: must be one of ${TABLES.join(', ')}`);
    if (!isInt(entry.address, 0, 65535)) problems.push(`${p}.address: must be 0..65535`);
    if (entry.type !== undefined && (entry.type === 'string' || !SIM_VALUE_TYPES.includes(entry.type as SimValueType))) {
      problems.push(`${p}.type: must be a numeric type (${SIM_VALUE_TYPES.filter((t) => t !== 'string').join(', ')})`);
    }
    const hasCounter = isObj(entry.counter);
    const hasSine = isObj(entry.sine);
    if (hasCounter === hasSine) problems.push(`${p}: needs exactly one of counter: {...} or sine: {...}`);
    if (hasSine) {
      const sine = entry.sine as Obj;
      if (typeof sine.amplitude !== 'number') problems.push(`${p}.sine.amplitude: must be a number`);
      if (typeof sine.periodSeconds !== 'number' || sine.periodSeconds <= 0) problems.push(`${p}.sine.periodSeconds: must be a number > 0`);
    }
    if (hasCounter) {
      const counter = entry.counter as Obj;
      for (const key of ['start', 'perSecond', 'max']) {
        if (counter[key] !== undefined && typeof counter[key] !== 'number') problems.push(`${p}.counter.${key}: must be a number`);
      }
    }
    const orders = parseOrders(entry, p, problems);
    if (problems.length === before) out.push({ ...(entry as unknown as DynamicRegister), ...orders });
  });
  return out;
}
