// Shapes of the outbox's records, statistics and options, and the interface both modes implement.
import type { Time } from '../core/time.js';

export interface OutboxRecord {
  seq: number;
  /** When the report's values were polled (Unix ms). */
  ts: number;
  payload: Buffer;
}

export interface OutboxDeviceStats {
  depth: number;
  bytes: number;
  dropped: number;
}

export interface OutboxStats {
  devices: Record<string, OutboxDeviceStats>;
  depth: number;
  bytes: number;
  dropped: number;
  /** Appended but not yet on disk (write-ahead: not yet committed; memory-first: memory only). */
  buffered: number;
  /** Reports (and their payload bytes) held on disk. */
  onDisk: number;
  diskBytes: number;
  /** Sample time of the oldest report held, if any (Unix ms). */
  oldestTs: number | undefined;
}

export interface OutboxDropInfo {
  device: string;
  records: number;
  bytes: number;
  reason: 'device-cap' | 'total-cap' | 'record-too-large' | 'write-failed';
}

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
  onDrop?: (info: OutboxDropInfo) => void;
  /** Called when devices got new records to send (wakes forwarders). */
  onCommit?: (devices: ReadonlySet<string>) => void;
  /** A timed commit failed (disk full, I/O error); the batch is kept and retried. */
  onError?: (err: unknown) => void;
  /** Clock and commit timers; the system's by default. */
  time?: Time;
}

/** What the reporter, forwarders and the gateway need from an outbox, whatever its mode. */
export interface ReportOutbox {
  /** Takes one report; the forwarder gets it through peek() once the mode allows. */
  append(device: string, payload: Buffer | string, ts: number): void;
  /** Up to `limit` records of a device, oldest first, with seq > afterSeq. */
  peek(device: string, limit: number, afterSeq?: number): OutboxRecord[];
  /** Removes a device's records up to and including seq (after their PUBACK). */
  ack(device: string, upToSeq: number): number;
  stats(): OutboxStats;
  devicesWithBacklog(): string[];
  /** Writes what memory holds to disk now. */
  flush(): void;
  close(): void;
}
