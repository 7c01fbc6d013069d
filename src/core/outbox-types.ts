// The outbox as a port: shapes of its records and statistics, and the interface every outbox
// implements (cloud/ holds the implementations and their options).

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
  /** Whether the disk takes writes (absent for outboxes without a file). */
  storage?: OutboxStorageState;
  /** Whether disk rows can be read; while failing, the devices whose rows could not be read wait (absent without a file). */
  reads?: OutboxReadState;
}

/** While `failing`, a device whose disk rows cannot be read is served nothing newer (order holds); reads are retried with backoff. */
export interface OutboxReadState {
  state: 'ok' | 'failing';
  cause?: string;
  since?: number;
  /** Reads that failed since start (every attempt). */
  failedReads: number;
}

/** While `failing`, reports live in memory only: a crash or power cut loses them (no crash window holds). */
export interface OutboxStorageState {
  state: 'ok' | 'failing';
  /** The error that started the episode, as SQLite gave it. */
  cause?: string;
  /** Start of the episode (monotonic ms: its age in /status). */
  since?: number;
  /** Writes that failed since start (every attempt). */
  failedWrites: number;
}

export interface OutboxDropInfo {
  device: string;
  records: number;
  bytes: number;
  /**
   * write-failed: memory lost at a stop while the file took no writes; file-lost: rows of a corrupt
   * file that could not be read; checksum: a row whose payload or time no longer matches its checksum;
   * device-removed: the queue of a device that left the site (ReportOutbox.discard).
   */
  reason: 'device-cap' | 'total-cap' | 'record-too-large' | 'write-failed' | 'file-lost' | 'checksum' | 'device-removed';
  /** checksum: the rejected row's seq. */
  seq?: number;
}

/** One loss event of an outbox: every device's share of it together (one log line). */
export interface OutboxLoss {
  reason: OutboxDropInfo['reason'];
  records: number;
  bytes: number;
  byDevice: Record<string, number>;
}

/** Who hears of drops: per device, and once per event with every device. */
export interface DropListeners {
  onDrop?: (info: OutboxDropInfo) => void;
  onLoss?: (loss: OutboxLoss) => void;
}

/** What the reporter, forwarders and the gateway need from an outbox, whatever its mode. */
export interface ReportOutbox {
  /** Takes one report; the forwarder gets it through peek() once the mode allows. */
  append(device: string, payload: Buffer | string, ts: number): void;
  /** Up to `limit` records of a device, oldest first, with seq > afterSeq. */
  peek(device: string, limit: number, afterSeq?: number): OutboxRecord[];
  /** Removes a device's records up to and including seq (after their PUBACK). */
  ack(device: string, upToSeq: number): number;
  /** Drops every record of a device that left the site, counted as dropped ('device-removed'); returns how many. */
  discard(device: string): number;
  stats(): OutboxStats;
  devicesWithBacklog(): string[];
  /** Writes what memory holds to disk now; a failure shows in stats().storage, it is not thrown. */
  flush(): void;
  /** Periodic: replaces a file deleted, replaced or found corrupt while open (outboxes with a file). */
  checkFile?(): void;
  close(): void;
}
