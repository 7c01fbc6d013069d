// A point-in-time picture of the gateway: what /status, /metrics, /healthz and `fieldgate status` show.

export interface BusStatus {
  name: string;
  kind: string;
  up: boolean;
  transactions: number;
  timeouts: number;
  exceptions: number;
  /** Received frames that were not exactly the awaited reply (never decoded). */
  discardedReplies?: number;
  /** Reopens after `reopenAfterSilenceMs` without a good reply. */
  silenceReopens?: number;
  queueDepth: number;
  /** Fraction of wall time the line was busy with transactions since start (0..1). */
  utilisation: number;
}

export interface DeviceStatus {
  name: string;
  bus: string;
  online: boolean;
  points: number;
  /** Milliseconds since the last successful poll; null before the first one. */
  lastPollAgeMs: number | null;
  skippedCycles: number;
}

export interface LinkStatus {
  device: string;
  state: 'up' | 'down' | 'connecting' | 'stopped';
  reconnects: number;
  publishes: number;
}

export interface OutboxStatus {
  depth: number;
  bytes: number;
  maxBytes: number;
  dropped: number;
}

export interface RateQueueStatus {
  pending: number;
  rateLimited: number;
  waits: number;
  rejected: number;
}

export interface GatewayStatus {
  version: string;
  startedAt: string;
  uptimeS: number;
  buses: BusStatus[];
  devices: DeviceStatus[];
  links: LinkStatus[];
  outbox: OutboxStatus | null;
  rateQueue: RateQueueStatus | null;
}

/** Why the gateway is not healthy; empty when it is (pure). */
export function unhealthyReasons(status: GatewayStatus, stalledLoops: readonly string[]): string[] {
  const reasons: string[] = [];
  for (const bus of status.buses) if (!bus.up) reasons.push(`bus ${bus.name} is down`);
  if (status.devices.length > 0 && status.devices.every((d) => !d.online)) reasons.push('no device is online');
  for (const loop of stalledLoops) reasons.push(`${loop} made no progress`);
  if (status.outbox && status.outbox.maxBytes > 0 && status.outbox.bytes >= status.outbox.maxBytes) {
    reasons.push('outbox is full and dropping reports');
  }
  return reasons;
}
