// Shared request validation: collects every field problem, then fails once with all of them.
import { invalidFields, type FieldError } from './errors.js';

export type Primitive = string | number | boolean;
export type JsonObject = Record<string, unknown>;

export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isPrimitive(value: unknown): value is Primitive {
  return typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

interface Opts {
  required?: boolean;
}

/** Reads fields of a JSON body; problems accumulate until done(). */
export class BodyReader {
  private readonly errors: FieldError[] = [];
  private readonly body: JsonObject;

  constructor(body: unknown) {
    if (isPlainObject(body)) {
      this.body = body;
    } else {
      this.body = {};
      if (body !== undefined) this.errors.push({ field: '(body)', message: 'must be a JSON object' });
    }
  }

  /** Present with a value: null counts as absent, as in every reader below. */
  has(field: string): boolean {
    return this.body[field] !== undefined && this.body[field] !== null;
  }

  fail(field: string, message: string): void {
    this.errors.push({ field, message });
  }

  private missing(field: string, opts: Opts): boolean {
    if (this.body[field] !== undefined && this.body[field] !== null) return false;
    if (opts.required) this.fail(field, 'is required');
    return true;
  }

  string(field: string, opts: Opts = {}): string | undefined {
    if (this.missing(field, opts)) return undefined;
    const value = this.body[field];
    if (typeof value !== 'string') return this.wrong(field, 'must be a string');
    if (opts.required && value.trim() === '') return this.wrong(field, 'must not be empty');
    return value;
  }

  number(field: string, opts: Opts & { integer?: boolean; min?: number; max?: number } = {}): number | undefined {
    if (this.missing(field, opts)) return undefined;
    const value = this.body[field];
    if (typeof value !== 'number' || !Number.isFinite(value)) return this.wrong(field, 'must be a number');
    if (opts.integer && !Number.isInteger(value)) return this.wrong(field, 'must be an integer');
    if (opts.min !== undefined && value < opts.min) return this.wrong(field, `must be at least ${opts.min}`);
    if (opts.max !== undefined && value > opts.max) return this.wrong(field, `must be at most ${opts.max}`);
    return value;
  }

  stringArray(field: string, opts: Opts & { max?: number; min?: number } = {}): string[] | undefined {
    if (this.missing(field, opts)) return undefined;
    const value = this.body[field];
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
      return this.wrong(field, 'must be an array of strings');
    }
    if (opts.min !== undefined && value.length < opts.min) return this.wrong(field, `must hold at least ${opts.min} item(s)`);
    if (opts.max !== undefined && value.length > opts.max) return this.wrong(field, `must hold at most ${opts.max} items`);
    return value as string[];
  }

  object(field: string, opts: Opts = {}): JsonObject | undefined {
    if (this.missing(field, opts)) return undefined;
    const value = this.body[field];
    if (!isPlainObject(value)) return this.wrong(field, 'must be an object');
    return value;
  }

  /** Tags: an object of string values. */
  tags(field: string, opts: Opts = {}): Record<string, string> | undefined {
    const value = this.object(field, opts);
    if (value === undefined) return undefined;
    const bad = Object.keys(value).find((k) => typeof value[k] !== 'string');
    if (bad !== undefined) return this.wrong(`${field}.${bad}`, 'must be a string');
    return value as Record<string, string>;
  }

  /** An object whose values are strings, numbers or booleans. */
  primitives(field: string, opts: Opts = {}): Record<string, Primitive> | undefined {
    const value = this.object(field, opts);
    if (value === undefined) return undefined;
    const bad = Object.keys(value).find((k) => !isPrimitive(value[k]));
    if (bad !== undefined) return this.wrong(`${field}.${bad}`, 'must be a string, number or boolean');
    return value as Record<string, Primitive>;
  }

  /** Throws the collected problems, if any. */
  done(): void {
    if (this.errors.length > 0) throw invalidFields(this.errors);
  }

  private wrong(field: string, message: string): undefined {
    this.fail(field, message);
    return undefined;
  }
}

/** A body that must be a non-empty flat object (attribute pushes). */
export function requireAttributeObject(body: unknown): JsonObject {
  if (!isPlainObject(body)) throw invalidFields([{ field: '(body)', message: 'must be a JSON object of attribute values' }]);
  if (Object.keys(body).length === 0) throw invalidFields([{ field: '(body)', message: 'must hold at least one attribute' }]);
  return body;
}

export interface Page {
  page: number;
  pageRecords: number;
}

/** page / page_records from the query, within the endpoint's documented bounds. */
export function readPage(query: URLSearchParams, maxRecords: number, defaultRecords: number): Page {
  const errors: FieldError[] = [];
  const read = (name: string, fallback: number, max: number): number => {
    const raw = query.get(name)?.trim();
    if (raw === undefined || raw === '') return fallback;
    // `2.0` is how some clients format an integer; `2.5`, `-1`, `1e2`, `NaN` are not integers here.
    const value = /^\d+(\.0*)?$/.test(raw) ? Number(raw) : NaN;
    if (!(Number.isSafeInteger(value) && value >= 1 && value <= max)) {
      errors.push({ field: name, message: max === Infinity ? 'must be an integer of at least 1' : `must be an integer from 1 to ${max}` });
      return fallback;
    }
    return value;
  };
  const page = read('page', 1, Infinity);
  const pageRecords = read('page_records', defaultRecords, maxRecords);
  if (errors.length > 0) throw invalidFields(errors);
  return { page, pageRecords };
}

export function paginate<T>(items: T[], page: Page): { items: T[]; total: number; page_total: number } {
  const start = (page.page - 1) * page.pageRecords;
  return {
    items: items.slice(start, start + page.pageRecords),
    total: items.length,
    page_total: Math.ceil(items.length / page.pageRecords),
  };
}

/**
 * Comma-separated list from the query; undefined when the parameter is absent. A repeated
 * parameter (`keys=a&keys=b`, as Python's requests sends a list) adds to the list.
 */
export function readList(query: URLSearchParams, name: string): string[] | undefined {
  const all = query.getAll(name);
  if (all.length === 0) return undefined;
  const items = all.flatMap((raw) => raw.split(',')).map((s) => s.trim()).filter((s) => s !== '');
  return [...new Set(items)];
}

/** A query flag such as `include_sub_groups`: `1` (the spec's form) or `true`, any case. */
export function readFlag(query: URLSearchParams, name: string): boolean {
  const raw = query.get(name)?.trim().toLowerCase();
  return raw === '1' || raw === 'true';
}

/** `keys` of the attribute reads: absent or empty both mean every attribute. */
export function readKeys(query: URLSearchParams): string[] | undefined {
  const keys = readList(query, 'keys');
  return keys && keys.length > 0 ? keys : undefined;
}

/** Latest instant a JavaScript Date (and so an ISO 8601 answer) can hold. */
export const MAX_TIME_MS = 8.64e15;

/**
 * Unix ms from the query; undefined when absent. Decimal milliseconds (`time.time()*1000` in
 * Python sends `1792866425165.6912`) are truncated; signs, exponents, NaN/Infinity are refused.
 */
export function readTimeMs(query: URLSearchParams, name: string, errors: FieldError[]): number | undefined {
  const raw = query.get(name)?.trim();
  if (raw === undefined || raw === '') return undefined;
  // Truncated in the text: Number('1792866425164.9999') already rounds up to ...165.
  const value = /^\d+(\.\d*)?$/.test(raw) ? Number(raw.split('.')[0]) : NaN;
  if (!(value <= MAX_TIME_MS)) {
    errors.push({ field: name, message: `must be Unix milliseconds from 0 to ${MAX_TIME_MS}` });
    return undefined;
  }
  return value;
}
