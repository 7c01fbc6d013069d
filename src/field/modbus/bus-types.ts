// The shapes of a Bus: the options it is built with, what it is asked to do (operations and their
// options), its results, and the job it keeps for each request.
import type { BusConfig } from '../../core/config/site-types.js';
import type { Logger } from '../../core/logger.js';
import type { Clock, Timers } from '../../core/time.js';
import type { Table } from '../../core/points/types.js';
import type { ReadBlock } from '../../core/points/codec.js';
import type { BroadcastWrite } from '../../core/modbus/broadcast-frame.js';
import type { RawReplyWindow } from './raw-exchange.js';
import type { Priority } from './request-queue.js';
import type { TransportFactory } from './transport.js';
import type { ReplyShape } from './transport-types.js';

export type { Priority };

export interface RequestOptions {
  /** 'high' jumps ahead of queued polls (default for writes); 'normal' for polls (default for reads). */
  priority?: Priority;
  /** Overrides the bus timeout for this request. */
  timeoutMs?: number;
  /**
   * How long the request may wait in the queue while its unit is guarded against a late reply or
   * cooling down (ms; 0: refused at once). Default: the bus's `writes.maxWaitMs` for 'high'
   * priority, 0 for polls.
   */
  maxWaitMs?: number;
  /**
   * A read sent only to learn whether the unit answers one this long: it goes whole or not at
   * all, never split by the bus into shorter pieces (refused, or waiting, while a late reply of
   * its shape may still come, like any request that cannot be made distinguishable).
   */
  lengthProbe?: boolean;
  /** Called when the request goes on the line (after its wait in the queue), for queue-wait figures. */
  onStart?: () => void;
  /**
   * The request's owner (a share client's connection, a page request): when it aborts, a request
   * still waiting leaves the queue and rejects with RequestCancelledError; one on the line
   * finishes its transaction (the line stays in frame sync) but sends no further one.
   */
  signal?: AbortSignal;
  /**
   * Monotonic ms the request may wait in the queue before it goes on the line; past it, it leaves
   * unsent with RequestExpiredError (counted as `expired`). None: it waits its turn.
   */
  queueDeadlineMs?: number;
}

export interface WriteOptions extends RequestOptions {
  /** Use FC16/FC15 even for a single register/coil (devices that lack FC6/FC5). */
  forceMulti?: boolean;
}

export type Operation =
  | { kind: 'read'; table: Table; start: number; count: number }
  | BroadcastWrite
  /** Read-modify-write of one bit of a holding register, in one job (no other request between). */
  | { kind: 'write-bit'; address: number; bit: number; value: boolean; forceMulti: boolean }
  /** Non-Modbus bytes for a custom data stream sharing the line; addressed to no unit. */
  | { kind: 'raw'; data: Buffer; window: RawReplyWindow }
  /**
   * A write to unit 0 of an RTU line, which every unit obeys and none answers: sent, then the line
   * is held for `turnaroundMs` (the units act on it) before the next request.
   */
  | { kind: 'broadcast'; write: BroadcastWrite; turnaroundMs: number };

export type OperationResult = ReadBlock<Uint16Array> | Buffer | undefined;


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

