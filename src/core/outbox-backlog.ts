// What the outbox holds, as /status and metrics show it, and when to log replay progress (pure:
// figures and time passed in).
import type { OutboxStats } from './outbox-types.js';
import type { EpochMs } from './time.js';

export interface BacklogFigures {
  reports: number;
  bytes: number;
  onDisk: number;
  inMemory: number;
  /** Age of the oldest report held (by its poll time, on the wall clock: rows outlive the process); null when empty. */
  oldestAgeMs: number | null;
}

export function backlogOf(stats: OutboxStats, wallNow: EpochMs): BacklogFigures {
  return {
    // Both modes: what is on disk plus what is not (yet): write-ahead's pending commit, memory-first's memory.
    reports: stats.onDisk + stats.buffered,
    bytes: stats.bytes,
    onDisk: stats.onDisk,
    inMemory: stats.buffered,
    oldestAgeMs: stats.oldestTs === undefined ? null : Math.max(0, wallNow - stats.oldestTs),
  };
}

export interface ProgressEvent {
  level: 'info' | 'warn';
  message: string;
  fields: Record<string, number | null>;
}

/**
 * A backlog exists while reports are on disk and the oldest report held is older than
 * `thresholdMs`: it was not acknowledged in time. Reports only in memory are never a backlog,
 * however long their device took to poll them. Its start and end are logged once; in between, progress at most every
 * `intervalMs`, with the acknowledgement rate since the previous line.
 */
export class ReplayProgress {
  private since: number | undefined;
  private lastAt = 0;
  private lastAcked = 0;

  constructor(private readonly intervalMs: number, private readonly thresholdMs: number) {}

  next(now: number, backlog: BacklogFigures, ackedTotal: number): ProgressEvent | undefined {
    // Rows on disk of unknown age (their read fails) keep a backlog going: it is not replayed yet.
    const unknownAge = backlog.onDisk > 0 && backlog.oldestAgeMs === null && this.since !== undefined;
    const present = unknownAge || (backlog.onDisk > 0 && backlog.oldestAgeMs !== null && backlog.oldestAgeMs > this.thresholdMs);
    const fields = { reports: backlog.reports, bytes: backlog.bytes, oldestAgeMs: backlog.oldestAgeMs };
    if (present && this.since === undefined) {
      this.since = now;
      this.mark(now, ackedTotal);
      return { level: 'warn', message: 'outbox backlog building', fields };
    }
    if (!present && this.since !== undefined) {
      const durationMs = now - this.since;
      this.since = undefined;
      return { level: 'info', message: 'outbox backlog replayed', fields: { ...fields, durationMs } };
    }
    if (!present || now - this.lastAt < this.intervalMs) return undefined;
    const ackedPerS = Math.round(((ackedTotal - this.lastAcked) * 1000) / Math.max(1, now - this.lastAt));
    this.mark(now, ackedTotal);
    return { level: 'info', message: 'outbox replay progress', fields: { ...fields, ackedPerS } };
  }

  private mark(now: number, ackedTotal: number): void {
    this.lastAt = now;
    this.lastAcked = ackedTotal;
  }
}
