// A6 device data: current attributes, metadata, history series, aggregates, removal.
import {
  FUNCTIONS, TIME_RANGES, WINDOWS, aggregate, resolveTimeRange, windowSeconds,
  type AggregateFunction, type TimeRange, type TimeRangeName, type WindowName,
} from '../aggregate.js';
import type { ApiContext } from '../http/context.js';
import { ApiError, ErrCode, invalidFields, notFound, type FieldError } from '../http/errors.js';
import { info, type Router } from '../http/router.js';
import { BodyReader, readKeys, readPage, readTimeMs } from '../http/validate.js';
import type { DeviceRecord } from '../state/model.js';
import type { EmulatorState } from '../state/state.js';
import { inferDataType } from './views.js';

export const SERIES_DEFAULT_RANGE_MS = 30 * 86_400_000;
const NUMERIC_DATA_TYPES = ['number', 'int', 'float', 'double', 'long', 'integer'];

function model(state: EmulatorState, d: DeviceRecord, identifier: string) {
  return state.types.get(d.type)?.attributes.find((a) => a.identifier === identifier);
}

function requireIdentifier(state: EmulatorState, d: DeviceRecord, identifier: string): void {
  const known = d.attributes.has(identifier) || d.history.some((h) => h.name === identifier) || model(state, d, identifier);
  if (!known) throw notFound('Attribute', 'identifier', identifier);
}

function enumParam<T extends string>(query: URLSearchParams, name: string, allowed: readonly T[], fallback: T, errors: FieldError[]): T {
  const raw = query.get(name);
  if (raw === null || raw === '') return fallback;
  if ((allowed as readonly string[]).includes(raw)) return raw as T;
  errors.push({ field: name, message: `must be one of ${allowed.join(', ')}` });
  return fallback;
}

/** A numeric attribute: a numeric model data_type, or (no model) only numbers seen. */
function isNumeric(state: EmulatorState, d: DeviceRecord, identifier: string): boolean {
  const m = model(state, d, identifier);
  if (m) return NUMERIC_DATA_TYPES.includes(m.data_type.toLowerCase());
  const current = d.attributes.get(identifier);
  if (current && typeof current.value !== 'number') return false;
  return d.history.every((h) => h.name !== identifier || typeof h.value === 'number');
}

export function deviceDataRoutes(r: Router<ApiContext>): void {
  r.get('/api/v1/device/:device_id/attributes', (ctx, p) => {
    const d = ctx.state.requireDevice(p.device_id);
    const items = [...d.attributes.entries()].map(([identifier, attr]) => {
      const m = model(ctx.state, d, identifier);
      const item: Record<string, unknown> = {
        identifier, value: attr.value, attr_type: attr.attr_type, data_type: m?.data_type ?? inferDataType(attr.value), ts: attr.ts,
      };
      if (m) item.model = { name: m.name, attr_type: m.attr_type, data_type: m.data_type, data_options: { ...m.data_options } };
      return item;
    });
    return info(items);
  });

  r.get('/api/v1/device/:device_id/attributes_raw', (ctx, p) => {
    const d = ctx.state.requireDevice(p.device_id);
    return info(ctx.state.attributeValues(d, readKeys(ctx.query)));
  });

  r.get('/api/v1/device/:device_id/attributes_meta', (ctx, p) => {
    const d = ctx.state.requireDevice(p.device_id);
    const keys = readKeys(ctx.query);
    const out: Record<string, unknown> = {};
    for (const [identifier, attr] of d.attributes) {
      if (keys && !keys.includes(identifier)) continue;
      out[identifier] = { type: attr.attr_type, data_type: model(ctx.state, d, identifier)?.data_type ?? inferDataType(attr.value), ts: attr.ts };
    }
    return info(out);
  });

  r.get('/api/v1/device/:device_id/attribute/:identifier/series', (ctx, p) => {
    const d = ctx.state.requireDevice(p.device_id);
    const page = readPage(ctx.query, 500, 20);
    const errors: FieldError[] = [];
    const start = readTimeMs(ctx.query, 'start_time', errors);
    const end = readTimeMs(ctx.query, 'end_time', errors);
    if (errors.length > 0) throw invalidFields(errors);
    requireIdentifier(ctx.state, d, p.identifier);
    const now = ctx.state.now();
    const range = start !== undefined && end !== undefined ? { start, end } : { start: now - SERIES_DEFAULT_RANGE_MS, end: now };
    const points = d.history
      .filter((h) => h.name === p.identifier && h.ts >= range.start && h.ts <= range.end)
      .reverse();
    const from = (page.page - 1) * page.pageRecords;
    return info(points.slice(from, from + page.pageRecords).map((h) => ({
      timestamp: new Date(h.ts).toISOString(), ts: h.ts, name: h.name, value: h.value, type: h.type,
    })));
  });

  r.get('/api/v1/device/:device_id/attribute/:identifier/aggregate', (ctx, p) => {
    const d = ctx.state.requireDevice(p.device_id);
    const errors: FieldError[] = [];
    const rangeName = enumParam<TimeRangeName>(ctx.query, 'time_range', TIME_RANGES, 'last_1h', errors);
    const window = enumParam<WindowName>(ctx.query, 'window', WINDOWS, '1h', errors);
    const fn = enumParam<AggregateFunction>(ctx.query, 'function', FUNCTIONS, 'avg', errors);
    let custom: TimeRange | undefined;
    if (rangeName === 'custom') {
      const start = readTimeMs(ctx.query, 'start_time', errors);
      const end = readTimeMs(ctx.query, 'end_time', errors);
      if (start === undefined || end === undefined) errors.push({ field: 'start_time,end_time', message: 'are required when time_range is custom' });
      else if (start > end) errors.push({ field: 'start_time', message: 'must not be after end_time' });
      else custom = { start, end };
    }
    if (errors.length > 0) throw invalidFields(errors);
    requireIdentifier(ctx.state, d, p.identifier);
    if (!isNumeric(ctx.state, d, p.identifier)) {
      throw new ApiError(ErrCode.badRequest, `Attribute is not numeric: ${p.identifier}`, [{ field: 'identifier', message: 'must be a numeric attribute' }]);
    }
    const range = resolveTimeRange(rangeName, ctx.state.now(), custom);
    const points = d.history.flatMap((h) => (h.name === p.identifier && typeof h.value === 'number' ? [{ ts: h.ts, value: h.value }] : []));
    return info({ time_range: range, window_duration: windowSeconds(window), function: fn, data: aggregate(points, range, window, fn) });
  });

  r.post('/api/v1/device/:device_id/attributes_remove', (ctx, p) => {
    const d = ctx.state.requireDevice(p.device_id);
    const body = new BodyReader(ctx.body);
    const keys = body.stringArray('keys', { required: true, min: 1 });
    body.done();
    for (const key of keys ?? []) d.attributes.delete(key);
    return info({});
  });
}
