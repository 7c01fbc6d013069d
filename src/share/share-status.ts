// What /status and `fieldgate status` show of each bus share.
import type { ShareCounters } from './share-service.js';

export interface ShareStatus extends ShareCounters {
  bus: string;
  /** "address:port" listened on. */
  listen: string;
  state: 'starting' | 'listening' | 'failed';
  access: 'read-only' | 'read-write';
  clients: number;
  /** Requests of the share in the bus now, waiting or on the line (at most `maxQueued`). */
  queued: number;
  /** Connections closed at once because maxClients were connected. */
  refusedConnections: number;
  /** Queue wait of forwarded requests over the last 1024 (ms); absent before the first. */
  queueWaitMs: { p50?: number; p99?: number };
  error?: string;
}
