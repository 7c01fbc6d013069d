// Config problems: the error that carries all of them, and wording helpers shared by the checkers.
import { redactUrlCredentials } from '../redact.js';
import type { ConfigIssue } from './site-types.js';

export type { ConfigIssue };

/** One line per issue, as `fieldgate validate` prints them. */
export function formatIssue(issue: ConfigIssue): string {
  return issue.path ? `${issue.path}: ${issue.message}` : issue.message;
}

/** Thrown by loadConfig with every problem found, never just the first. */
export class ConfigError extends Error {
  readonly issues: readonly ConfigIssue[];

  /** Values quoted in messages may be URLs with a password in them: those never leave here. */
  constructor(found: readonly ConfigIssue[]) {
    const issues = found.map((issue) => ({ path: issue.path, message: redactUrlCredentials(issue.message) }));
    const count = issues.length === 1 ? '1 problem' : `${issues.length} problems`;
    super(`invalid configuration (${count}):\n${issues.map(formatIssue).join('\n')}`);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

/** Longer strings are cut in messages: a mistyped value is recognisable from its start. */
const MAX_QUOTED = 40;

/** A short rendering of a value for messages: strings quoted (and cut), containers named. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') {
    // Before cutting: a cut could leave half of a URL's password without the "@" that marks it.
    const text = redactUrlCredentials(value);
    return text.length > MAX_QUOTED ? `${JSON.stringify(text.slice(0, MAX_QUOTED))}... (${text.length} characters)` : JSON.stringify(text);
  }
  return String(value);
}

/** What kind of value it is, without any of its content (for values that may be a whole file). */
export function describeKind(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `a ${typeof value}`;
}

function fold(name: string): string {
  return name.toLowerCase().replace(/[_\-\s]/g, '');
}

/** Edits (insert, delete, substitute, swap of neighbours) turning a into b. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 0; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The known key a typo most likely meant (`adress` -> `address`, `baud_rate` -> `baudRate`). */
export function suggestKey(unknown: string, known: Iterable<string>): string | undefined {
  const target = fold(unknown);
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(target, fold(candidate));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const tolerance = Math.max(1, Math.floor(target.length / 3));
  return bestDistance <= tolerance ? best : undefined;
}

export function unknownKeyMessage(key: string, known: Iterable<string>): string {
  const suggestion = suggestKey(key, known);
  return suggestion ? `unknown key (did you mean "${suggestion}"?)` : 'unknown key';
}

const SECTION_RANK: Record<string, number> = { gateway: 0, buses: 1, devices: 2 };

/** `devices[1].points[3].type` -> ['devices', 1, 'points', 3]: the list entries an issue belongs to. */
function location(path: string): (string | number)[] {
  const end = path.lastIndexOf(']');
  const head = end >= 0 ? path.slice(0, end + 1) : path.split('.')[0];
  return [...head.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] !== undefined ? Number(m[2]) : m[1]));
}

function compareLocations(a: (string | number)[], b: (string | number)[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (typeof x === 'number' && typeof y === 'number') {
      if (x !== y) return x - y;
    } else if (i === 0 && x !== y) {
      return (SECTION_RANK[String(x)] ?? 3) - (SECTION_RANK[String(y)] ?? 3);
    }
  }
  return a.length - b.length;
}

/** File order: sections, then list entries by index; issues of one entry keep the order they were found in. */
export function sortIssues(issues: readonly ConfigIssue[]): ConfigIssue[] {
  const keyed = issues.map((issue) => ({ issue, at: location(issue.path) }));
  return keyed.sort((a, b) => compareLocations(a.at, b.at)).map(({ issue }) => issue);
}
