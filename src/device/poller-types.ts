// The Poller's public shapes (sink, stats, options) and its per-device run record.
import type { DeviceConfig } from '../core/config/site-types.js';
import type { CompiledDevice } from '../core/config/compile.js';
import type { Logger } from '../core/logger.js';
import type { Clock, EpochMs, MonoMs, Timers, WallClock } from '../core/time.js';
import type { PollBus, Sample } from './poll-cycle.js';
import type { PointHealth, FailingPointStatus } from './point-health.js';
import type { PointCodec } from '../core/points/codec.js';
import type { ReadPlanLearner, LearnedLimit } from './read-plan-learner.js';
import type { IdentityCheck, IdentityStatus } from './identity-check.js';

export type DeviceState = 'online' | 'offline';

export interface SampleSink {
  /** One per cycle that decoded at least one value. */
  onSample(sample: Sample): void;
  /**
   * Once per transition. `ts`: the wall time the state holds from: the start of the cycle that
   * answered (online; that cycle's sample follows with the same time) or the transition (offline).
   */
  onDeviceState(device: string, state: DeviceState, reason: string, ts: EpochMs): void;
}

export interface DevicePollStats {
  device: string;
  state: DeviceState | 'unknown';
  cycles: number;
  failedCycles: number;
  /** Cycles that read at least one value (a cycle the late-reply guard held back is neither this nor failed). */
  cyclesWithValues: number;
  skippedCycles: number;
  lastCycleMs: number;
  lastError?: string;
  /** True while cycles take longer than the period (cycles are being skipped). */
  overrunning: boolean;
  /** Points the device answers for without a value, now. */
  failingPoints: FailingPointStatus[];
  /** Times any point started failing since start. */
  pointFailures: number;
  /** Splits and isolated points learned from the device's refusals. */
  learned: LearnedLimit[];
  /** Whether the device identifies as its profile's model (devices whose profile declares identification). */
  identification?: IdentityStatus;
}

export interface PollerOptions {
  bus: PollBus;
  devices: readonly CompiledDevice[];
  sink: SampleSink;
  logger: Logger;
  /** Monotonic: the schedule, cycle times and ages. */
  clock?: Clock;
  /** Wall: each sample's `ts` only. */
  wall?: WallClock;
  timers?: Timers;
  random?: () => number;
  /** Consecutive cycles without any value before a device is reported offline. */
  offlineAfterFailedCycles?: number;
  /** Pause after a continuous device's cycle that read nothing (so a dead bus does not spin). */
  continuousRetryMs?: number;
}

export interface Overrun {
  since: number;
  skippedBefore: number;
}

export interface DeviceRun {
  config: DeviceConfig;
  learner: ReadPlanLearner;
  health: PointHealth;
  codecs: ReadonlyMap<string, PointCodec>;
  log: Logger;
  startAt: number;
  /** Index of the next slot: its due time is startAt + k * period. */
  k: number;
  running: Promise<void> | undefined;
  /** A cycle asked for out of turn (pollNow) and not yet done: scheduled cycles wait for it. */
  outOfTurn: Promise<void> | undefined;
  cancelTimer: (() => void) | undefined;
  consecutiveFailures: number;
  overrun: Overrun | undefined;
  lastCycleRead: boolean;
  /** Start of the last cycle that read a value (monotonic; 0: none yet). */
  lastReadCycleAt: MonoMs | 0;
  /** Aborted when a reload takes the device off: its reads still queued leave the bus queue. */
  owner: AbortController;
  /** Taken off the schedule by a reload: a cycle still running sets no new timer. */
  removed: boolean;
  /** The model check of a device whose profile declares identification. */
  identity: IdentityCheck | undefined;
  stats: Omit<DevicePollStats, 'overrunning' | 'failingPoints' | 'pointFailures' | 'learned'>;
}
