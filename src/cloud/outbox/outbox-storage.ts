// Whether the outbox's SQLite file takes writes: failing from the first failed write (disk full,
// read-only, I/O error, corrupt or deleted file) until a write succeeds again. The outbox keeps
// working from memory meanwhile; the listener hears each transition once, never each attempt.
import type { OutboxStorageState } from '../../core/outbox-types.js';

export type StorageListener = (state: OutboxStorageState) => void;

/** The error as an operator reads it: SQLite's code and message (e.g. `SQLITE_FULL: database or disk is full`). */
export function storageCause(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as Error & { code?: unknown }).code;
  return typeof code === 'string' && !err.message.startsWith(code) ? `${code}: ${err.message}` : err.message;
}

export class StorageHealth {
  private failing: { cause: string; since: number } | undefined;
  private failedWrites = 0;

  constructor(private readonly now: () => number, private readonly listener: StorageListener | undefined) {}

  get ok(): boolean {
    return this.failing === undefined;
  }

  /** A write (commit, delete, reopen) failed: counted; the first of an episode is reported. */
  failed(err: unknown): void {
    this.failedWrites += 1;
    if (this.failing) return;
    this.failing = { cause: storageCause(err), since: this.now() };
    this.listener?.(this.state());
  }

  /** A write reached the file: the end of an episode is reported. */
  succeeded(): void {
    if (!this.failing) return;
    this.failing = undefined;
    this.listener?.(this.state());
  }

  state(): OutboxStorageState {
    const base = { failedWrites: this.failedWrites };
    return this.failing ? { ...base, state: 'failing', cause: this.failing.cause, since: this.failing.since } : { ...base, state: 'ok' };
  }
}
