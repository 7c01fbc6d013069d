// What a bus reports about itself (metrics, /status, tests).
import type { ConnectionState } from './bus-connection.js';

export interface BusStats {
  bus: string;
  state: ConnectionState;
  queueDepth: number;
  inFlight: number;
  /** Transactions put on the wire (each busy retry counts). */
  transactions: number;
  timeouts: number;
  exceptions: number;
  busyRetries: number;
  frameErrors: number;
  otherErrors: number;
  cooldownRejects: number;
  downRejects: number;
  queueRejects: number;
  /** Sum of transaction durations; utilisation = delta(busyTimeMs) / delta(wall time). */
  busyTimeMs: number;
  reconnects: number;
  unitsCoolingDown: number;
  downReason?: string;
}
