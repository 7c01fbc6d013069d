// Settings of the SQLite-backed outbox implementations (both modes).
import type { Time } from '../../core/time.js';
import type { MovedAside } from './outbox-file.js';
import type { OutboxDropInfo, OutboxLoss, OutboxReadState, OutboxStorageState } from '../../core/outbox-types.js';

export type OutboxMode = 'memory-first' | 'write-ahead';

export interface OutboxOptions {
  /** SQLite file (in the state directory). ':memory:' for tests. */
  path: string;
  /** Write-ahead: commit buffered appends at most this long after the first one. */
  flushIntervalMs?: number;
  /** Write-ahead: ...or as soon as this many are buffered. */
  flushRecords?: number;
  /** Memory-first: the longest a report may live in memory only before it is written to disk. */
  durableAfterMs?: number;
  /** Payload bytes kept per device; the oldest are dropped beyond it. */
  maxBytesPerDevice?: number;
  /** Payload bytes kept for all devices together; the globally oldest are dropped beyond it. */
  maxBytesTotal?: number;
  /**
   * What a report held in memory costs beyond its payload (its objects, Buffer and queue entry),
   * counted in its bytes against both caps while it is in memory (0 here; the gateway's default
   * is the measured DEFAULT_RECORD_OVERHEAD_BYTES). On disk a report counts its payload.
   */
  recordOverheadBytes?: number;
  /** Each device's share of a drop. */
  onDrop?: (info: OutboxDropInfo) => void;
  /** Each drop event once, with its total and the count per device. */
  onLoss?: (loss: OutboxLoss) => void;
  /** Called when devices got new records to send (wakes forwarders). */
  onCommit?: (devices: ReadonlySet<string>) => void;
  /** The file stopped or started taking writes again (once per transition, with the cause). */
  onStorage?: (state: OutboxStorageState) => void;
  /** Disk reads started or stopped failing (once per transition, with the cause). */
  onReads?: (state: OutboxReadState) => void;
  /**
   * The file was taken up late (the start could not open it): its rows from an earlier run are
   * now queued. Called after the outbox took them in; the site decides what is still wanted.
   */
  onFileAttached?: () => void;
  /** A corrupt file was moved aside (kept) and a fresh one used. */
  onMovedAside?: (moved: MovedAside) => void;
  /** While writes fail: the time between attempts (1 s by default); deadlines are not chased. Also the first wait before a failed read is retried (doubling to 30 s). */
  storageRetryMs?: number;
  /** While running, a file found corrupt by every check is given up only after this long (60 s by default): read errors heal. */
  condemnAfterMs?: number;
  /** Clock and commit timers; the system's by default. */
  time?: Time;
}

/** Resident bytes a small report costs in memory beyond its payload (measured: docs/northbound.md). */
export const DEFAULT_RECORD_OVERHEAD_BYTES = 450;
