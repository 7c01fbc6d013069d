// Path-aware reading of a parsed YAML seed: every problem is collected with its path.
import { isPlainObject, isPrimitive, type JsonObject, type Primitive } from '../http/validate.js';

export class SeedError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid emulator seed:\n  ${problems.join('\n  ')}`);
    this.name = 'SeedError';
  }
}

const DURATION_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "90s", "15m", "2h", "3d" -> milliseconds; undefined when malformed. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*([smhd])$/.exec(text.trim());
  return m ? Number(m[1]) * DURATION_MS[m[2]] : undefined;
}

export class Fields {
  readonly obj: JsonObject;

  constructor(
    value: unknown,
    readonly path: string,
    private readonly problems: string[],
    private readonly now: number,
  ) {
    if (isPlainObject(value)) {
      this.obj = value;
    } else {
      this.obj = {};
      problems.push(`${path}: must be a mapping`);
    }
  }

  problem(field: string, message: string): void {
    this.problems.push(`${this.at(field)}: ${message}`);
  }

  at(field: string): string {
    return this.path === '' ? field : `${this.path}.${field}`;
  }

  child(field: string, value: unknown): Fields {
    return new Fields(value, field, this.problems, this.now);
  }

  requiredString(field: string): string {
    const value = this.obj[field];
    if (typeof value === 'string' && value !== '') return value;
    if (typeof value === 'number') return String(value);
    this.problem(field, value === undefined ? 'is required' : 'must be a non-empty string');
    return '';
  }

  string(field: string, fallback = ''): string {
    const value = this.obj[field];
    if (value === undefined || value === null) return fallback;
    if (typeof value === 'string') return value;
    if (typeof value === 'number') return String(value);
    this.problem(field, 'must be a string');
    return fallback;
  }

  optionalString(field: string): string | undefined {
    return this.obj[field] === undefined ? undefined : this.string(field);
  }

  bool(field: string, fallback: boolean): boolean {
    const value = this.obj[field];
    if (value === undefined) return fallback;
    if (typeof value === 'boolean') return value;
    this.problem(field, 'must be true or false');
    return fallback;
  }

  integer(field: string, fallback: number): number {
    const value = this.obj[field];
    if (value === undefined) return fallback;
    if (typeof value === 'number' && Number.isInteger(value)) return value;
    this.problem(field, 'must be an integer');
    return fallback;
  }

  /** Unix ms from `<field>` (a number or ISO date) or from `ago` ("2h"), else `fallback`. */
  time(field: string, fallback: number): number {
    const value = this.obj[field];
    const ago = this.obj.ago;
    if (value === undefined && ago === undefined) return fallback;
    if (typeof value === 'number' && Number.isFinite(value)) return value;
    if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) return Date.parse(value);
    if (value === undefined && typeof ago === 'string') {
      const ms = parseDuration(ago);
      if (ms !== undefined) return this.now - ms;
      this.problem('ago', 'must be a duration such as 90s, 15m, 2h or 3d');
      return fallback;
    }
    this.problem(field, 'must be Unix milliseconds or an ISO 8601 date');
    return fallback;
  }

  tags(field: string): Record<string, string> {
    const value = this.obj[field];
    if (value === undefined || value === null) return {};
    if (isPlainObject(value) && Object.values(value).every((v) => typeof v === 'string')) {
      return value as Record<string, string>;
    }
    this.problem(field, 'must be a mapping of strings');
    return {};
  }

  record(field: string): Record<string, unknown> {
    const value = this.obj[field];
    if (value === undefined || value === null) return {};
    if (isPlainObject(value)) return value;
    this.problem(field, 'must be a mapping');
    return {};
  }

  primitives(field: string): Record<string, Primitive> {
    const value = this.record(field);
    for (const [k, v] of Object.entries(value)) {
      if (!isPrimitive(v)) this.problem(`${field}.${k}`, 'must be a string, number or boolean');
    }
    return value as Record<string, Primitive>;
  }

  stringList(field: string): string[] {
    const value = this.obj[field];
    if (value === undefined || value === null) return [];
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
    this.problem(field, 'must be a list of strings');
    return [];
  }

  /** Each element of a list, read by `read` with an indexed path. */
  list<T>(field: string, read: (f: Fields) => T): T[] {
    const value = this.obj[field];
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) {
      this.problem(field, 'must be a list');
      return [];
    }
    return value.map((item, i) => read(this.child(`${this.at(field)}[${i}]`, item)));
  }
}
