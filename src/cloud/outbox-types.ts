// Shapes of the outbox's records, statistics and options.

export interface OutboxRecord {
  seq: number;
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
  /** Appended but not yet committed. */
  buffered: number;
}

export interface OutboxDropInfo {
  device: string;
  records: number;
  bytes: number;
  reason: 'device-cap' | 'total-cap' | 'record-too-large' | 'write-failed';
}

export interface OutboxOptions {
  /** SQLite file (in the state directory). ':memory:' for tests. */
  path: string;
  /** Commit buffered appends at most this long after the first one. */
  flushIntervalMs?: number;
  /** ...or as soon as this many are buffered. */
  flushRecords?: number;
  /** Payload bytes kept per device; the oldest are dropped beyond it. */
  maxBytesPerDevice?: number;
  /** Payload bytes kept for all devices together; the globally oldest are dropped beyond it. */
  maxBytesTotal?: number;
  onDrop?: (info: OutboxDropInfo) => void;
  /** Called after each commit with the devices that got new records (wakes forwarders). */
  onCommit?: (devices: ReadonlySet<string>) => void;
  /** A timed commit failed (disk full, I/O error); the batch is kept and retried. */
  onError?: (err: unknown) => void;
}
