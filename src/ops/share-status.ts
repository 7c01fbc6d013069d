// What /status and `fieldgate status` show of each bus share.
export interface ShareStatus {
  bus: string;
  /** "address:port" listened on. */
  listen: string;
  state: 'starting' | 'listening' | 'failed';
  access: 'read-only' | 'read-write';
  clients: number;
  /** Connections closed at once because maxClients were connected. */
  refusedConnections: number;
  requests: number;
  forwarded: number;
  fromCache: number;
  refusedByPolicy: number;
  busy: number;
  failed: number;
  /** Queue wait of forwarded requests over the last 1024 (ms); absent before the first. */
  queueWaitMs: { p50?: number; p99?: number };
  error?: string;
}
