// What a bus reports about itself (metrics, /status, tests).
import type { ConnectionState } from './bus-connection.js';
import type { CoolingUnitView } from './cooldown.js';
import type { LateUnitView } from './late-guard.js';

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
  /** Reads repeated after a timeout (each repeat's timeout is counted in `timeouts` too). */
  timeoutRepeats: number;
  frameErrors: number;
  otherErrors: number;
  cooldownRejects: number;
  downRejects: number;
  queueRejects: number;
  /** Requests their owner cancelled before they went on the line (or between their transactions). */
  cancelled: number;
  /** Requests that had not reached the line by their queue deadline (RequestOptions.queueDeadlineMs). */
  expired: number;
  /** Sum of transaction durations; utilisation = delta(busyTimeMs) / delta(wall time). */
  busyTimeMs: number;
  reconnects: number;
  unitsCoolingDown: number;
  /** The units cooling down, by unit id (absent from stats made up by tests). */
  coolingDownUnits?: CoolingUnitView[];
  /** Replies that matched their request exactly (values or Modbus exceptions). */
  goodReplies: number;
  /** Frames or bytes received that were not the awaited reply (late, duplicate, foreign, malformed). */
  discardedReplies: number;
  /** Replies that came after their request had timed out (RTU framing; discarded, never decoded). */
  lateReplies: number;
  /** Requests refused because their unit's late reply may still come (RTU framing). */
  lateGuardRejects: number;
  /** Per unit: late replies and the slowest answer time seen (units that never answered late are absent). */
  lateUnits: LateUnitView[];
  /** Times the port was reopened because no unit gave a good reply for `reopenAfterSilenceMs`. */
  silenceReopens: number;
  downReason?: string;
  /** The line's echo does not match the bus's `echo` setting (the hint says what to set); cleared by a good reply. */
  echoProblem?: string;
}

/** What the watchdog needs of a bus. */
export interface BusProgress {
  goodReplies: number;
  /** Up, requests failing since the last good reply, and not every unit in cool-down. */
  expected: boolean;
}
