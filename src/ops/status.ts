// A point-in-time picture of the gateway: what /status, /metrics, /healthz and `fieldgate status` show.
import type { ShareStatus } from '../share/share-status.js';
import type { FailingPointStatus } from '../device/point-health.js';
import type { LearnedLimit } from '../device/read-plan-learner.js';
import type { IdentityStatus } from '../device/identity-check.js';
import type { CoolingUnitView } from '../field/modbus/cooldown.js';

export type { FailingPointStatus } from '../device/point-health.js';
export type { LearnedLimit } from '../device/read-plan-learner.js';

export interface BusStatus {
  name: string;
  kind: string;
  up: boolean;
  transactions: number;
  timeouts: number;
  exceptions: number;
  /** Transactions that gave no values: timeouts, exceptions, frame and other errors (absent in older statuses). */
  failures?: number;
  /** Received frames that were not exactly the awaited reply (never decoded). */
  discardedReplies?: number;
  /** Reopens after `reopenAfterSilenceMs` without a good reply. */
  silenceReopens?: number;
  /** Replies that came after their request had timed out (RTU framing; discarded, never decoded). */
  lateReplies?: number;
  /** Per unit that answered late: how often, and its slowest answer time (pick a timeoutMs above it). */
  lateUnits?: LateUnitStatus[];
  /** Units whose requests fail fast after repeated failures, probed once per period (docs/engine.md); absent in older statuses. */
  unitsCoolingDown?: number;
  /** Those units: when the next probe may go, how many periods in a row, and why. */
  coolingDownUnits?: CoolingUnitStatus[];
  queueDepth: number;
  /** Requests refused at once because the bus queue was full (absent in older statuses). */
  queueRejects?: number;
  /** Requests their owner cancelled before they went on the line: a share client or page request gone, a device removed (absent in older statuses). */
  cancelled?: number;
  /** Requests past their queue deadline, taken out unsent (a share's maxQueueWaitMs; absent in older statuses). */
  expired?: number;
  /** Fraction of wall time the line was busy with transactions since start (0..1). */
  utilisation: number;
  /** The line's echo does not match the bus's `echo` setting: what to set. */
  echoProblem?: string;
}

/** A unit cooling down: the bus's own view of it, as /status shows it. */
export type CoolingUnitStatus = CoolingUnitView;

export interface LateUnitStatus {
  unit: number;
  lateReplies: number;
  slowestAnswerMs: number;
}

export interface DeviceStatus {
  name: string;
  bus: string;
  online: boolean;
  points: number;
  /** Milliseconds since the last successful poll; null before the first one. */
  lastPollAgeMs: number | null;
  skippedCycles: number;
  /** Poll cycles that gave values since start (each one report when the device reports every poll). */
  cyclesWithValues?: number;
  /** True while poll cycles take longer than the period and are being skipped. */
  overrunning?: boolean;
  /** Points the device answers for without a value (refused or undecodable), now. */
  failingPoints?: FailingPointStatus[];
  /** Times any point started failing since start. */
  pointFailures?: number;
  /** What the read plan learned from the device's refusals (splits, isolated points). */
  learned?: LearnedLimit[];
  /** Gateway mode: its address and the reports the cloud refused (e.g. an address not bound). */
  subDevice?: SubDeviceStatus;
  /** Whether it identifies as its profile's model (a profile declaring identification; not with identify: false). */
  identification?: IdentityStatus;
  /** Cloud and page writes since start: taken to the bus, and dropped for a later write of the same point (docs/northbound.md). */
  writes?: WriteOrderStatus;
}

export interface WriteOrderStatus {
  written: number;
  /** Dropped: a later-stamped write of the point had already been taken to the bus. */
  superseded: number;
  /** Dropped: a later-stamped write of the point waited behind it. */
  coalesced: number;
  /** Synced values (interface B) dropped: a write of the point was queued or on the bus. */
  yielded: number;
}

export interface SubDeviceStatus {
  address: string;
  /** Reports the cloud answered as refused since start (or since its address changed). */
  reportsRefused: number;
  /** The cloud refused its last answered report. */
  refused: boolean;
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
  /** Outbox mode; absent in statuses from older versions. */
  mode?: 'memory-first' | 'write-ahead';
  /** Reports on disk, and held in memory only (memory-first) or awaiting commit (write-ahead). */
  onDisk?: number;
  inMemory?: number;
  /** Age of the oldest report held, by its poll time; null when empty. */
  oldestAgeMs?: number | null;
  /** `failing` while the file takes no writes: reports are then in memory only and no crash window holds. */
  storage?: OutboxStorageStatus;
  /** `failing` while disk rows cannot be read: the devices holding them wait (nothing newer is sent first). */
  reads?: OutboxReadStatus;
  /** Reports dropped per device (caps, failed writes, lost rows, checksums, removed devices), kept in the outbox file across restarts. */
  droppedByDevice?: Record<string, number>;
}

export interface OutboxReadStatus {
  state: 'ok' | 'failing';
  cause?: string;
  failingForMs?: number;
  /** Reads that failed since start (every attempt). */
  failedReads: number;
}

export interface OutboxStorageStatus {
  state: 'ok' | 'failing';
  /** The error that started the episode (SQLite's code and message). */
  cause?: string;
  /** How long the episode has lasted. */
  failingForMs?: number;
  /** Writes that failed since start (every attempt). */
  failedWrites: number;
  /** True only while reports reach the disk within the crash window (memory-first) or group commit (write-ahead). */
  crashWindowHolds: boolean;
}

export interface RateQueueStatus {
  pending: number;
  rateLimited: number;
  waits: number;
  rejected: number;
}

/** The site file the daemon runs (reload: docs/site-file.md). */
export interface ConfigStatus {
  /** 1 at start, +1 per applied reload. */
  generation: number;
  /** Of the site file's bytes as last loaded. */
  sha256: string;
  loadedAt: string;
  /** Null, or why the last reload was refused (every problem with its path). */
  lastError: string | null;
  reloads: { applied: number; unchanged: number; refused: number; failed: number };
  /** The site generation running (docs/remote-config.md); absent without a generation store. */
  site?: SiteStatus;
}

export interface SiteStatus {
  /** Generation number of the store (kept across restarts). */
  generation: number;
  state: 'confirmed' | 'awaiting_confirm';
  /** The file that runs: a generation's text in the state directory. */
  file: string;
  /** Why this text runs. */
  reason: string;
  /** The last rollback since start, as one line; empty when none. */
  lastRollback: string;
}

export interface GatewayStatus {
  version: string;
  /** The daemon's process id (absent in statuses from older versions). */
  pid?: number;
  startedAt: string;
  uptimeS: number;
  buses: BusStatus[];
  devices: DeviceStatus[];
  links: LinkStatus[];
  outbox: OutboxStatus | null;
  rateQueue: RateQueueStatus | null;
  /** Absent in statuses from older versions. */
  config?: ConfigStatus;
  /** Bus shares (docs/share.md); absent when none is configured. */
  shares?: ShareStatus[];
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
  const storage = status.outbox?.storage;
  if (storage?.state === 'failing') {
    reasons.push(`outbox storage failing (${storage.cause ?? 'unknown cause'}): reports kept in memory only, no crash window holds`);
  }
  const reads = status.outbox?.reads;
  if (reads?.state === 'failing') reasons.push(`outbox reads failing (${reads.cause ?? 'unknown cause'}): devices with reports on disk wait, retried with backoff`);
  return reasons;
}
