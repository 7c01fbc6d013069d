// The options a Bus is built with, and the job it keeps for each request.
import type { BusConfig } from '../../core/config/site-types.js';
import type { Logger } from '../../core/logger.js';
import type { Clock, Timers } from '../../core/time.js';
import type { Operation, OperationResult, Priority } from './bus-request.js';
import type { TransportFactory } from './transport.js';
import type { ReplyShape } from './transport-types.js';

export interface BusOptions {
  config: BusConfig;
  transportFactory: TransportFactory;
  logger: Logger;
  clock?: Clock;
  timers?: Timers;
  random?: () => number;
  /** Requests allowed to wait; beyond it requests are rejected with QueueFullError. */
  queueLimit?: number;
  /** Pause before repeating a request answered "busy" or "acknowledge" (grows linearly); the line serves others meanwhile. */
  busyBackoffMs?: number;
  /** Share of bus time 'high' (cloud) work may take while polls wait, (0, 1]; 1 = always first. */
  highShare?: number;
  /** Units that serve several requests at once (device `limits.concurrent`); others get one at a time. */
  concurrentUnits?: ReadonlySet<number>;
}

export interface Job {
  unit: number;
  op: Operation;
  priority: Priority;
  timeoutMs: number;
  resolve: (result: OperationResult) => void;
  reject: (err: unknown) => void;
  /** Repeats after "busy" so far. */
  busyAttempts: number;
  /** Repeats after a timeout so far (timeout-repeats.ts). */
  timeoutRepeats: number;
  /** A read's request as it goes on the wire whole: repeated identically after a timeout. */
  repeatShape?: ReplyShape;
  /** How the job was last let onto the line: a repeat after "busy" of a probe stays the probe. */
  admitted?: 'go' | 'probe';
  /** Epoch ms until which the job may wait in the queue while its unit is guarded or cooling down. */
  waitUntil?: number;
  /** Monotonic: past it the request leaves the queue unsent (RequestOptions.queueDeadlineMs). */
  expiresAt?: number;
  queueDeadlineMs?: number;
  /** Epoch ms when it was queued (for the refusal's reason). */
  queuedAt?: number;
  /** Modbus TCP (beside-lane.ts): sent beside the slots (its unit timed out), or while such a request was in flight. */
  lane?: 'beside' | 'while-beside';
  /** A read that goes whole or not at all (RequestOptions.lengthProbe). */
  lengthProbe?: boolean;
  onStart?: () => void;
  /** Its owner's (RequestOptions.signal). */
  signal?: AbortSignal;
}

