// The normalised shape of a bus's `share:` block (read by share.ts; docs/share.md).
export const SHARE_TABLES = ['coil', 'discrete', 'holding', 'input'] as const;
export type ShareTable = (typeof SHARE_TABLES)[number];

/** Function codes a share forwards: reads 1-4, writes 5, 6, 15, 16. */
export const SHARE_FUNCTIONS = [1, 2, 3, 4, 5, 6, 15, 16] as const;

export interface ShareRange {
  /** Absent: every table. */
  table?: ShareTable;
  from: number;
  to: number;
}

export interface ShareUnitPolicy {
  /** Absent: every function the share forwards (reads only when read-only). */
  functions?: number[];
  /** Absent: every address. */
  ranges?: ShareRange[];
}

export interface ShareConfig {
  address: string;
  port: number;
  /**
   * TCP unit id -> bus unit id; absent: each unit of the bus's devices as itself. TCP unit 0 is
   * the broadcast only with `allowBroadcast` (and then may not be mapped here).
   */
  units?: Array<{ tcp: number; bus: number }>;
  access: 'read-only' | 'read-write';
  /** Per TCP unit id. */
  policy?: Array<{ unit: number } & ShareUnitPolicy>;
  maxClients: number;
  idleTimeoutMs: number;
  ratePerSecond: number;
  /** Requests per client waiting or on the line. */
  queueDepth: number;
  /** Requests of all clients together in the bus (waiting or on the line); beyond it: server busy. */
  maxQueued: number;
  /** Monotonic ms a forwarded request may wait in the bus queue before it goes out; past it: server busy, unsent. */
  maxQueueWaitMs: number;
  /** Share of the line's time share requests may take while polls wait, (0, 1]. */
  lineShare: number;
  /** 0: off. */
  cacheMs: number;
  /** Bus request timeout for forwarded requests (absent: the bus's). */
  timeoutMs?: number;
  /**
   * RTU and RTU-over-TCP buses only: a write to TCP unit 0 goes on the line as a broadcast (no
   * reply awaited) and is answered with the normal write reply, which means "sent"; a read to
   * unit 0 is refused (illegal function). Off: unit 0 is answered "path unavailable".
   */
  allowBroadcast: boolean;
  /** How long the line is held after a broadcast before the next request (ms). */
  broadcastTurnaroundMs: number;
}
