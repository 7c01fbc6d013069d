// Reads one mapping of the site file field by field, recording an issue for every bad or unknown key.
import { parseDurationMs } from './duration.js';
import { describeValue, unknownKeyMessage } from './issues.js';
import { isReservedName, reservedNameMessage } from './reserved-names.js';
import type { ConfigIssue } from './site-types.js';

interface Presence<T> {
  /** Value used when the key is absent; without it (and without `optional`) the key is required. */
  default?: T;
  optional?: boolean;
}

export interface NumberRule extends Presence<number> {
  min?: number;
  max?: number;
  integer?: boolean;
}

export interface ChoiceRule<T> extends Presence<T> {
  /** Word used in "unknown <what> ...", e.g. "type"; without it: "must be one of ...". */
  what?: string;
}

export function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function joinPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path ? `${path}.${key}` : key;
}

function rangeText(rule: NumberRule): string {
  if (rule.min !== undefined && rule.max !== undefined) return ` ${rule.min}..${rule.max}`;
  if (rule.min !== undefined) return ` >= ${rule.min}`;
  if (rule.max !== undefined) return ` <= ${rule.max}`;
  return '';
}

export class Fields {
  private readonly known = new Set<string>();

  private constructor(
    private readonly raw: Record<string, unknown>,
    readonly path: string,
    readonly issues: ConfigIssue[],
  ) {}

  /** A reader over `value`, or undefined (with an issue) when it is not a mapping. */
  static of(value: unknown, path: string, issues: ConfigIssue[]): Fields | undefined {
    if (isMapping(value)) return new Fields(value, path, issues);
    issues.push({ path, message: `must be a mapping (got ${describeValue(value)})` });
    return undefined;
  }

  /** An optional nested mapping: an empty reader when absent, so defaults still apply. */
  section(key: string): Fields | undefined {
    const value = this.take(key);
    return value === undefined ? new Fields({}, this.at(key), this.issues) : Fields.of(value, this.at(key), this.issues);
  }

  at(key: string): string {
    return joinPath(this.path, key);
  }

  has(key: string): boolean {
    return this.raw[key] !== undefined;
  }

  report(key: string, message: string): void {
    this.issues.push({ path: this.at(key), message });
  }

  /** The raw value of a key without marking it known (to choose how to read it). */
  peek(key: string): unknown {
    return Object.hasOwn(this.raw, key) ? this.raw[key] : undefined;
  }

  /** The raw value of a key, marking the key as known. */
  take(key: string): unknown {
    this.known.add(key);
    return Object.hasOwn(this.raw, key) ? this.raw[key] : undefined;
  }

  /** `name`: the value becomes a key (a point id, a device name), so built-in object property names are refused. */
  string(key: string, rule: Presence<string> & { pattern?: RegExp; patternText?: string; name?: boolean } = {}): string | undefined {
    return this.read(key, rule, (value) => {
      if (typeof value !== 'string' || value.length === 0) return 'must be a non-empty string';
      if (rule.pattern && !rule.pattern.test(value)) return `${rule.patternText ?? 'has an invalid format'} (got ${describeValue(value)})`;
      if (rule.name && isReservedName(value)) return reservedNameMessage(value);
      return undefined;
    });
  }

  number(key: string, rule: NumberRule = {}): number | undefined {
    return this.read(key, rule, (value) => {
      const kind = rule.integer ? 'an integer' : 'a number';
      if (typeof value !== 'number' || !Number.isFinite(value) || (rule.integer && !Number.isInteger(value))) {
        return `must be ${kind}${rangeText(rule)} (got ${describeValue(value)})`;
      }
      if ((rule.min !== undefined && value < rule.min) || (rule.max !== undefined && value > rule.max)) {
        return `must be ${rangeText(rule).trim()} (got ${value})`;
      }
      return undefined;
    });
  }

  integer(key: string, rule: NumberRule = {}): number | undefined {
    return this.number(key, { ...rule, integer: true });
  }

  /** Milliseconds from a number or a duration string ("500ms", "2s", "1m"). */
  duration(key: string, rule: NumberRule = {}): number | undefined {
    const raw = this.take(key);
    if (raw === undefined) return this.absent(key, rule);
    const ms = parseDurationMs(raw);
    if (ms === undefined) {
      this.report(key, `must be a duration in ms or like "500ms", "2s", "1m" (got ${describeValue(raw)})`);
      return undefined;
    }
    if ((rule.min !== undefined && ms < rule.min) || (rule.max !== undefined && ms > rule.max)) {
      this.report(key, `must be${rangeText(rule)} ms (got ${ms} ms)`);
      return undefined;
    }
    return ms;
  }

  boolean(key: string, rule: Presence<boolean> = {}): boolean | undefined {
    return this.read(key, rule, (value) =>
      typeof value === 'boolean' ? undefined : `must be true or false (got ${describeValue(value)})`,
    );
  }

  choice<T extends string | number>(key: string, values: readonly T[], rule: ChoiceRule<T> = {}): T | undefined {
    return this.read(key, rule, (value) => {
      if ((values as readonly unknown[]).includes(value)) return undefined;
      const list = values.map((v) => (typeof v === 'string' ? v : String(v))).join(', ');
      return rule.what ? `unknown ${rule.what} ${describeValue(value)} (expected ${list})` : `must be one of ${list} (got ${describeValue(value)})`;
    }) as T | undefined;
  }

  /** A list, or undefined (with an issue) when present but not a list. Absent lists are empty. */
  list(key: string, rule: { required?: boolean } = {}): unknown[] | undefined {
    const value = this.take(key);
    if (value === undefined || value === null) {
      if (rule.required) this.report(key, 'required (a list)');
      return rule.required ? undefined : [];
    }
    if (Array.isArray(value)) return value;
    this.report(key, `must be a list (got ${describeValue(value)})`);
    return undefined;
  }

  /** Reports every key that no reader asked for, suggesting the likely intended one. */
  rejectUnknownKeys(): void {
    for (const key of Object.keys(this.raw)) {
      if (!this.known.has(key)) this.report(key, unknownKeyMessage(key, this.known));
    }
  }

  private read<T>(key: string, rule: Presence<T>, problem: (value: unknown) => string | undefined): T | undefined {
    const value = this.take(key);
    if (value === undefined) return this.absent(key, rule);
    const message = problem(value);
    if (message) {
      this.report(key, message);
      return undefined;
    }
    return value as T;
  }

  private absent<T>(key: string, rule: Presence<T>): T | undefined {
    if (rule.default === undefined && !rule.optional) this.report(key, 'required');
    return rule.default;
  }
}
