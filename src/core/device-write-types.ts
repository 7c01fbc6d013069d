// Shapes shared by the cloud-to-device services: the device's bus operations, write results and
// command replies.
import type { ReadBlock, WriteOp } from './points/codec.js';
import type { PointValue, Table } from './points/types.js';

/** The bus operations of one device, run with write priority. */
export interface DeviceIo {
  read(table: Table, start: number, count: number): Promise<ReadBlock>;
  write(op: WriteOp): Promise<void>;
  sleep(ms: number): Promise<void>;
}

export interface ApplyResult {
  /** Point id -> the value read back from the device after the write. */
  applied: Record<string, PointValue>;
  /** Point id -> why it was refused before touching the bus. */
  rejected: Record<string, string>;
  /** Point id -> why the write or read-back failed on the bus. */
  failed: Record<string, string>;
  /**
   * Point id -> the device's real value of a refused or failed point, read back so the cloud's
   * current value (set by the push itself) is corrected.
   */
  corrected: Record<string, PointValue>;
}

export interface CommandError {
  code: number;
  message: string;
}

export type CommandOutcome = { ok: true; result: Record<string, unknown> } | { ok: false; error: CommandError };

/** Error codes in command replies (HTTP-like so a cloud user reads them without a table). */
export const COMMAND_ERRORS = {
  badParams: 400,
  unknownMethod: 404,
  tooLarge: 413,
  invalidValue: 422,
  busy: 429,
  internal: 500,
  deviceFailed: 503,
} as const;

/**
 * The key of a read's result that maps each asked point without a value to why (docs/protocol.md §3).
 * `@` is outside the point id alphabet, so it never hides a point's value.
 */
export const ABSENT_KEY = '@absent';

/** A map keyed by cloud-chosen names: no prototype, so "__proto__" is a key like any other. */
export function emptyRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

export function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** How many names a log line or error text lists before "and N more". */
export const NAMES_SHOWN = 5;

/** "a: why; b: why; and 3 more": bounded text for per-point failures (a message may name thousands). */
export function describeFailures(failed: Readonly<Record<string, string>>, shown = NAMES_SHOWN): string {
  const ids = Object.keys(failed);
  const head = ids.slice(0, shown).map((id) => `${id}: ${failed[id]}`).join('; ');
  return ids.length > shown ? `${head}; and ${ids.length - shown} more` : head;
}

/** "a, b, c and 1997 more": bounded text for a list of any length (`total` if `names` is a prefix). */
export function firstNames(names: readonly string[], shown = NAMES_SHOWN, total = names.length): string {
  const head = names.slice(0, shown).join(', ');
  return total > shown ? `${head} and ${total - shown} more` : head;
}
