// One Bus per physical line (or TCP connection): a bounded priority queue in front of the transport.
// RTU lines run exactly one transaction at a time with the inter-frame silence kept between them;
// slow or dead units cool down instead of stealing the line; the port is reopened by itself.
import type { BusConfig } from '../../core/config/site-types.js';
import type { Logger } from '../../core/logger.js';
import type { Table } from '../../core/points/types.js';
import { BusConnection, type ConnectionState } from './bus-connection.js';
import {
  type Operation, type OperationResult, type Priority, type RequestOptions, type WriteOptions,
  addressesUnit, newJob, validateOperation,
} from './bus-request.js';
import { type Clock, type Timers, systemClock, systemTimers } from '../../core/time.js';
import { QueueFullError } from '../../core/queue-full-error.js';
import type { ReadBlock } from '../../core/points/codec.js';
import { type UnitStateView, UnitHealthTracker } from './cooldown.js';
import type { BusOptions, Job } from './bus-types.js';
import { BusDownError, BusStoppedError, InvalidRequestError } from './errors.js';
import type { BroadcastWrite } from '../../core/modbus/broadcast-frame.js';
import type { LateUnitView } from './late-guard.js';
import { type SlowUnits, wireSlowUnits } from './bus-slow-wiring.js';
import type { BusProgress, BusStats } from './bus-stats.js';
import { BusOutcomes, zeroCounters } from './bus-outcomes.js';
import type { RawReplyWindow } from './raw-exchange.js';
import { RequestQueue } from './request-queue.js';
import { BusAdmission } from './bus-admission.js';
import { type SettledListener, SettledListeners } from './settled-listeners.js';
import { JobOwners } from './job-owners.js';
import { BusPump } from './bus-pump.js';
import type { ModbusTransport } from './transport.js';

export type { RequestOptions, WriteOptions, Priority, UnitStateView };

export type BusState = ConnectionState;
export type { BusOptions } from './bus-types.js';
export type { BusProgress, BusStats } from './bus-stats.js';

export const DEFAULT_QUEUE_LIMIT = 1000;

export class Bus {
  readonly name: string;
  private readonly config: BusConfig;
  private readonly transport: ModbusTransport;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly queue: RequestQueue<Job>;
  private readonly health: UnitHealthTracker;
  /** Late replies (RTU framing) and "busy" answers. */
  private readonly slow: SlowUnits;
  private readonly counters = zeroCounters();
  private readonly outcomes: BusOutcomes;
  private readonly admission: BusAdmission;
  private readonly connection: BusConnection;
  /** Starts queued requests as the line allows, performs and settles them (bus-pump.ts). */
  private readonly line: BusPump;
  private readonly settledListeners: SettledListeners;
  /** Requests whose owner may cancel them (RequestOptions.signal). */
  private readonly owners: JobOwners;

  constructor(options: BusOptions) {
    this.config = options.config;
    this.name = options.config.name;
    this.log = options.logger.child({ bus: options.config.name });
    this.clock = options.clock ?? systemClock;
    this.timers = options.timers ?? systemTimers;
    this.queue = new RequestQueue<Job>(Math.max(1, options.queueLimit ?? DEFAULT_QUEUE_LIMIT), options.highShare ?? 1);
    this.health = new UnitHealthTracker(options.config.cooldown);
    const interFrameDelayMs = options.config.kind === 'tcp' ? 0 : Math.max(0, options.config.interFrameDelayMs);
    this.transport = options.transportFactory(options.config);
    this.connection = new BusConnection(
      this.transport, options.config.reconnect,
      { onUp: () => this.onUp(), onDown: (reason) => this.onDown(reason) },
      this.log, this.clock, this.timers, options.random ?? Math.random,
    );
    this.outcomes = new BusOutcomes({
      log: this.log, clock: this.clock, health: this.health, counters: this.counters,
      reopenAfterSilenceMs: options.config.reopenAfterSilenceMs, isUp: () => this.state === 'up',
      lost: (reason) => this.connection.lost(reason), reopen: (reason) => void this.connection.reopen(reason),
    });
    this.transport.onDiscard((reason) => this.outcomes.discarded(reason));
    this.slow = wireSlowUnits({
      config: options.config, clock: this.clock, timers: this.timers, interFrameDelayMs, busyBackoffMs: options.busyBackoffMs,
      transport: this.transport, outcomes: this.outcomes, counters: this.counters, isUp: () => this.state === 'up',
      health: this.health, queue: this.queue, downError: () => new BusDownError(this.name, this.connection.downReason), pump: () => this.line.pump(),
    });
    this.admission = new BusAdmission(options.concurrentUnits ?? new Set(), this.slow.late, this.health, this.counters, this.clock);
    this.settledListeners = new SettledListeners(this.log);
    this.line = new BusPump({
      config: options.config, tcp: options.config.kind === 'tcp', maxInFlight: options.config.kind === 'tcp' ? Math.max(1, options.config.maxInFlight) : 1, interFrameDelayMs,
      clock: this.clock, timers: this.timers, log: this.log, queue: this.queue, admission: this.admission, transport: this.transport,
      counters: this.counters, outcomes: this.outcomes, slow: () => this.slow, settledListeners: this.settledListeners,
      owners: () => this.owners, isUp: () => this.state === 'up',
    });
    this.owners = new JobOwners((job) => {
      const out = this.queue.remove(job, job.priority) || this.slow.busy.cancel(job);
      if (out) this.line.pump();
      return out;
    }, this.counters);
  }

  private get state(): BusState {
    return this.connection.state;
  }

  /** Opens the port; requests made before it is open wait in the queue. */
  start(): void {
    this.connection.start();
  }

  /** Fails everything queued, closes the port (requests in flight fail with PortClosedError). */
  async stop(): Promise<void> {
    const wasActive = this.state !== 'idle' && this.state !== 'stopped';
    const waiting = this.takeWaiting();
    await this.connection.stop();
    for (const job of waiting) job.reject(new BusStoppedError(this.name));
    if (wasActive) this.log.info('bus stopped');
  }

  read(unit: number, table: Table, start: number, count: number, options: RequestOptions = {}): Promise<ReadBlock<Uint16Array>> {
    return this.submit(unit, { kind: 'read', table, start, count }, options.priority ?? 'normal', options)
      .then((result) => result as ReadBlock<Uint16Array>);
  }

  /** FC6 for one register (unless forceMulti), FC16 otherwise. Jumps ahead of polls by default. */
  async writeRegisters(unit: number, address: number, values: readonly number[], options: WriteOptions = {}): Promise<void> {
    const op: Operation = { kind: 'write-registers', address, values, forceMulti: options.forceMulti ?? false };
    await this.submit(unit, op, options.priority ?? 'high', options);
  }

  /** FC5 for one coil (unless forceMulti), FC15 otherwise. Jumps ahead of polls by default. */
  async writeCoils(unit: number, address: number, values: readonly boolean[], options: WriteOptions = {}): Promise<void> {
    const op: Operation = { kind: 'write-coils', address, values, forceMulti: options.forceMulti ?? false };
    await this.submit(unit, op, options.priority ?? 'high', options);
  }

  /** One bit of a holding register, read and written in one job: no concurrent bit write is lost. */
  async writeBit(unit: number, address: number, bit: number, value: boolean, options: WriteOptions = {}): Promise<void> {
    const op: Operation = { kind: 'write-bit', address, bit, value, forceMulti: options.forceMulti ?? false };
    await this.submit(unit, op, options.priority ?? 'high', options);
  }

  /** Raw bytes of a custom data stream sharing this RTU line, in its turn; resolves with the reply. */
  async exchangeRaw(data: Buffer, window: RawReplyWindow, options: RequestOptions = {}): Promise<Buffer> {
    const reply = await this.submit(0, { kind: 'raw', data, window }, options.priority ?? 'high');
    return reply as Buffer;
  }

  /**
   * A write to every unit of an RTU line at once (unit 0, FC5/6 or FC15/16), in its turn like any
   * request: resolves once it was sent and the line was held `turnaroundMs` for the units to act.
   * No unit answers a broadcast, so this says "sent", never "done". Refused on a Modbus TCP bus.
   */
  async broadcast(write: BroadcastWrite, turnaroundMs: number, options: RequestOptions = {}): Promise<void> {
    if (this.config.kind === 'tcp') throw new InvalidRequestError(`broadcast needs an RTU line (bus ${this.name} is Modbus TCP)`);
    await this.submit(0, { kind: 'broadcast', write, turnaroundMs }, options.priority ?? 'high', options);
  }

  /** Every read and write finished on the line from now on, failed ones too (a lost write reply: maybe applied). */
  onSettled(listener: SettledListener): () => void {
    return this.settledListeners.add(listener);
  }

  /** Share of bus time requests of the bus's share (priority 'share') may take while polls wait. */
  setLineShare(share: number): void {
    this.queue.setLineShare(share);
  }

  stats(): BusStats {
    return {
      bus: this.name, state: this.state, queueDepth: this.queue.size, inFlight: this.line.inFlight,
      reconnects: this.connection.reconnects, busyTimeMs: this.line.busyTimeMs, lateUnits: this.lateUnits(),
      ...this.outcomes.figures(),
      ...(this.state === 'down' ? { downReason: this.connection.downReason } : {}),
    };
  }

  /** For the watchdog: good replies so far, and whether the bus is expected to produce more now. */
  progress(): BusProgress {
    return this.outcomes.progress();
  }

  unitState(unit: number): UnitStateView {
    return this.health.view(unit);
  }

  /** Units that answered after their timeout (RTU framing), with how late. */
  lateUnits(): LateUnitView[] {
    return this.slow.late.lateUnits();
  }

  private submit(unit: number, op: Operation, priority: Priority, options: RequestOptions = {}): Promise<OperationResult> {
    try {
      validateOperation(unit, op);
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.state === 'stopped' || this.state === 'idle') return Promise.reject(new BusStoppedError(this.name));
    if (this.state === 'down') {
      this.counters.downRejects += 1;
      return Promise.reject(new BusDownError(this.name, this.connection.downReason));
    }
    const gone = this.owners.gone(options.signal, unit);
    if (gone) return Promise.reject(gone);
    return new Promise<OperationResult>((resolve, reject) => {
      if (addressesUnit(op)) this.outcomes.seen(unit);
      const job: Job = newJob(unit, op, priority, options, this.config, this.clock.now(), ...this.owners.settling(options.signal, () => job, resolve, reject));
      if (!this.queue.push(job, priority)) {
        this.outcomes.queueRefused(this.queue.limit);
        reject(new QueueFullError(`bus ${this.name}`, this.queue.limit));
        return;
      }
      this.owners.watch(job);
      this.line.pump();
    });
  }

  /** Owners with requests on this bus still unsettled (tests: nothing of a gone owner stays). */
  get ownersWaiting(): number {
    return this.owners.size;
  }

  private onUp(): void {
    this.outcomes.opened();
    this.line.opened();
  }

  /** Port lost or open failed: everything waiting fails fast (pollers skip the cycle). */
  private onDown(reason: string): void {
    for (const job of this.takeWaiting()) job.reject(new BusDownError(this.name, reason));
  }

  /** Stops the line's timers and takes every waiting request out (the caller fails them). */
  private takeWaiting(): Job[] {
    this.line.cancelTimers();
    return [...this.queue.drain(), ...this.slow.busy.cancelAll()];
  }
}

