// Each shipped profile against the manual's register table, kept as data in test/fixtures/profiles/
// manual (transcribed from the manual or the SunSpec model definition, not from the profile file).
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadProfiles } from '../../../src/ops/profile-library.js';
import { vocabularyQuantity } from '../../../src/core/config/point-vocabulary.js';

const MANUAL = fileURLToPath(new URL('../../fixtures/profiles/manual/', import.meta.url));
const library = loadProfiles([]).library;

interface Row { id: string; table: string; address: number; type: string; length?: number; scale?: number; scaleFactor?: string; notImplemented?: number | string; unit?: string; positive?: 'export'; wordOrder?: 'big' | 'little' }

/** Register types that span several registers, whose word order the document fixes. */
const MULTI_REGISTER = new Set(['int32', 'uint32', 'float32', 'int64', 'uint64', 'float64']);

/** The document's unit (a row's `unit`) -> the vocabulary's, by which the profile multiplies the document's resolution. */
const TO_VOCABULARY_UNIT: Record<string, { unit: string; factor: number }> = {
  kW: { unit: 'W', factor: 1000 }, kvar: { unit: 'var', factor: 1000 }, kVA: { unit: 'VA', factor: 1000 }, Wh: { unit: 'kWh', factor: 0.001 }, varh: { unit: 'kvarh', factor: 0.001 },
};

/**
 * The scale a profile point must have for a row: the document's resolution, times the unit change
 * to the vocabulary's unit, negated where the document's sign is the vocabulary's opposite (a
 * meter's power export positive; the vocabulary's is import positive).
 */
function expectedScale(row: Row, point: Record<string, unknown>): number | undefined {
  let scale = row.scale ?? 1;
  if (row.unit !== undefined) {
    const change = TO_VOCABULARY_UNIT[row.unit];
    expect(change, `${row.id}: no unit change from ${row.unit}`).toBeDefined();
    expect(point.unit, `${row.id} unit`).toBe(change.unit);
    scale *= change.factor;
  }
  if (row.positive === 'export') {
    expect(vocabularyQuantity(row.id)?.sign, `${row.id}: only a quantity with the vocabulary's import-positive sign is negated`).toMatch(/^import positive/);
    scale = -scale;
  }
  return scale === 1 ? undefined : Number(scale.toPrecision(12));
}

/**
 * "Not implemented" value of each SunSpec type, as the SunSpec Alliance's reference implementation
 * defines them (sunspec/pysunspec2, sunspec2/mb.py: SUNS_UNIMPL_* and point_type_info; count is
 * checked like uint16).
 */
const SUNSPEC_NOT_IMPLEMENTED: Record<string, number | string> = {
  int16: -32768, sunssf: -32768, uint16: 0xffff, count: 0xffff, enum16: 0xffff, bitfield16: 0xffff, acc16: 0, acc32: 0,
  int32: -2147483648, uint32: 0xffffffff, enum32: 0xffffffff, bitfield32: 0xffffffff, string: '',
};

/** SunSpec types as the specification defines them -> the register type that carries them. */
const SUNSPEC_TYPES: Record<string, string> = {
  uint16: 'uint16', int16: 'int16', sunssf: 'int16', enum16: 'uint16', bitfield16: 'uint16', acc16: 'uint16', count: 'uint16',
  uint32: 'uint32', int32: 'int32', acc32: 'uint32', bitfield32: 'uint32', enum32: 'uint32', string: 'string',
};
/** Registers each SunSpec type occupies per the specification (strings: their size). */
const SUNSPEC_SIZES: Record<string, number> = { uint32: 2, int32: 2, acc32: 2, bitfield32: 2, enum32: 2 };

interface SunSpecTable { model: number; length: number; points: { name: string; offset: number; type: string; size: number; sf?: string }[] }
interface MeterTable { manual: string; wordOrder?: 'big' | 'little'; registers: { id: string; table: string; hex: string; format: string; resolution?: number; unit?: string; positive?: 'export'; wordOrder?: 'big' | 'little' }[] }

function manualRows(name: string): { rows: Row[]; model?: { id: number; length: number } } {
  const data = JSON.parse(readFileSync(`${MANUAL}${name}.json`, 'utf8')) as SunSpecTable | MeterTable;
  if ('model' in data) {
    // The model header (ID, L) and padding are not points; every other point of the table is.
    const rows = data.points.filter((p) => p.name !== 'ID' && p.name !== 'L' && p.type !== 'pad').map((p) => {
      expect(p.size, `${name} ${p.name} size`).toBe(p.type === 'string' ? p.size : SUNSPEC_SIZES[p.type] ?? 1);
      return { id: p.name, table: 'holding', address: p.offset, type: SUNSPEC_TYPES[p.type], ...(p.type === 'string' ? { length: p.size } : {}), ...(p.sf ? { scaleFactor: p.sf } : {}), notImplemented: SUNSPEC_NOT_IMPLEMENTED[p.type] };
    });
    return { rows, model: { id: data.model, length: data.length } };
  }
  // A table records its document's word order (big-endian when it records none); a row may differ.
  return { rows: data.registers.map((r) => ({ id: r.id, table: r.table, address: Number.parseInt(r.hex, 16), type: r.format, ...(r.resolution ? { scale: r.resolution } : {}), ...(r.unit ? { unit: r.unit } : {}), ...(r.positive ? { positive: r.positive } : {}), wordOrder: r.wordOrder ?? data.wordOrder ?? 'big' })) };
}

const shipped = library.names();
const tables = readdirSync(MANUAL).filter((file) => file.endsWith('.json')).map((file) => file.slice(0, -'.json'.length)).sort();

describe('shipped profiles match the manuals\' tables', () => {
  it('has a manual table for every shipped profile and no table without a profile', () => {
    expect(tables).toEqual(shipped);
  });

  it.each(shipped)('%s: the table names its document, and the profile says whether that document was read', (name) => {
    const data = JSON.parse(readFileSync(`${MANUAL}${name}.json`, 'utf8')) as { document?: Record<string, unknown> };
    const doc = data.document;
    expect(doc, `${name}: the table names no document`).toBeDefined();
    for (const key of ['title', 'version', 'table']) expect(typeof doc![key] === 'string' && (doc![key] as string).length > 0, `${name} document.${key}`).toBe(true);
    const source = library.get(name)!.source;
    expect(doc!.title).toBe(source.title);
    // primary: transcribed from the document itself; secondary: it could not be read, and the profile says so.
    expect(doc!.quality).toBe(source.quality);
    if (source.quality === 'secondary') expect(typeof doc!.notes).toBe('string');
  });

  it.each(shipped)('%s', (name) => {
    const profile = library.get(name)!;
    const { rows, model } = manualRows(name);
    if (model) {
      expect(profile.sunspec?.model).toBe(model.id);
      if (model.id !== 160) expect(profile.sunspec?.length).toBe(model.length);
    }
    const byId = new Map(rows.map((row) => [row.id, row]));
    // Every point of the profile is in the manual's table, at its address, with its type and scale.
    for (const raw of profile.points) {
      const point = raw as Record<string, unknown>;
      const row = byId.get(point.id as string);
      expect(row, `${name}: point ${String(point.id)} is not in the manual's table`).toBeDefined();
      expect({ table: point.table, address: point.address, type: point.type }, `${name} ${row!.id}`).toEqual({ table: row!.table, address: row!.address, type: row!.type });
      if (row!.length !== undefined) expect(point.length, `${name} ${row!.id} length`).toBe(row!.length);
      expect(point.scale ?? undefined, `${name} ${row!.id} scale`).toBe(expectedScale(row!, point));
      expect(point.scaleFactor ?? undefined, `${name} ${row!.id} scale factor`).toBe(row!.scaleFactor);
      if (row!.wordOrder && MULTI_REGISTER.has(row!.type)) expect(point.wordOrder ?? profile.device.wordOrder ?? 'big', `${name} ${row!.id} word order`).toBe(row!.wordOrder);
      // SunSpec: every point is absent when it holds its type's "not implemented" value.
      if (model) expect(point.notImplemented, `${name} ${row!.id} not-implemented value`).toBe(row!.notImplemented);
    }
    // And every row of the table is in the profile (SunSpec 160: only its first module is shipped).
    expect(profile.points.length).toBe(rows.length);
  });

  it.each(shipped.filter((name) => 'identification' in JSON.parse(readFileSync(`${MANUAL}${name}.json`, 'utf8'))))('%s: its identification registers are the manual\'s, with the manual\'s values', (name) => {
    const data = JSON.parse(readFileSync(`${MANUAL}${name}.json`, 'utf8')) as { identification: { table: string; hex: string; format: string; values: (number | string)[]; readAlone?: boolean }[] };
    const registers = library.get(name)!.identification?.registers ?? [];
    // readAlone: the document says the register answers only a read of itself (a longer read returns other words).
    expect(registers.map((r) => ({ table: r.point.table, address: r.point.address, type: r.point.type, values: [...r.values].sort(), readAlone: r.readAlone ?? false })))
      .toEqual(data.identification.map((r) => ({ table: r.table, address: Number.parseInt(r.hex, 16), type: r.format, values: [...r.values].sort(), readAlone: r.readAlone ?? false })));
  });
});
