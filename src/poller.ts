// One Poller per bus: each device on its own drift-free period (next = start + k * period, first run
// jittered within one period), its precomputed read plan run through the Bus, points decoded, and
// one sample per cycle handed to a sink. A cycle still running when the next is due makes that
// next one skip (counted), so overload never queues work or grows memory.
import type { DeviceConfig } from './config/site-types.js';
import type { Logger } from './log.js';
import type { ReadBlock, RequestOptions } from './modbus/bus-request.js';
import { type Clock, type Timers, systemClock, systemTimers } from './modbus/clock.js';
import {
  BusDownError, BusStoppedError, ModbusExceptionError, ModbusTimeoutError, QueueFullError, UnitCoolingDownError,
} from './modbus/errors.js';
import { type ReadRequest, planReads } from './modbus/plan.js';
import { type PointCodec, compilePoint } from './points/codec.js';
import type { PointValue, Table } from './points/types.js';

/** The part of Bus the poller uses (a fake in tests). */
export interface PollBus {
  read(unit: number, table: Table, start: number, count: number, options?: RequestOptions): Promise<ReadBlock>;
}

export interface SampleError {
  /** Points left without a value by this error. */
  points: string[];
  table: Table;
  start: number;
  count: number;
  /** Error class name, e.g. ModbusTimeoutError, ModbusExceptionError, UnitCoolingDownError. */
  kind: string;
  message: string;
}

export interface Sample {
  device: string;
  /** Epoch ms when the cycle started. */
  ts: number;
  values: Record<string, PointValue>;
  errors: SampleError[];
}

export type DeviceState = 'online' | 'offline';

export interface SampleSink {
  /** One per cycle that decoded at least one value. */
  onSample(sample: Sample): void;
  /** Once per transition. */
  onDeviceState(device: string, state: DeviceState, reason: string): void;
}

export interface DevicePollStats {
  device: string;
  state: DeviceState | 'unknown';
  cycles: number;
  failedCycles: number;
  skippedCycles: number;
  lastCycleMs: number;
  lastError?: string;
}

export interface PollerOptions {
  bus: PollBus;
  devices: readonly DeviceConfig[];
  sink: SampleSink;
  logger: Logger;
  clock?: Clock;
  timers?: Timers;
  random?: () => number;
  /** Consecutive cycles without any answer before a device is reported offline. */
  offlineAfterFailedCycles?: number;
}

interface DeviceRun {
  config: DeviceConfig;
  plan: ReadRequest[];
  codecs: Map<string, PointCodec>;
  log: Logger;
  startAt: number;
  /** Index of the next slot: its due time is startAt + k * period. */
  k: number;
  running: Promise<void> | undefined;
  cancelTimer: (() => void) | undefined;
  consecutiveFailures: number;
  overrunLogged: boolean;
  stats: DevicePollStats;
}

/** Errors after which the rest of the cycle's requests would only fail too (or cost line time). */
const ABORTS_CYCLE = [ModbusTimeoutError, UnitCoolingDownError, BusDownError, BusStoppedError, QueueFullError];

export class Poller {
  private readonly runs: DeviceRun[];
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly random: () => number;
  private readonly offlineAfter: number;
  private started = false;

  constructor(private readonly options: PollerOptions) {
    this.clock = options.clock ?? systemClock;
    this.timers = options.timers ?? systemTimers;
    this.random = options.random ?? Math.random;
    this.offlineAfter = Math.max(1, options.offlineAfterFailedCycles ?? 3);
    this.runs = options.devices.map((config) => this.prepare(config));
  }

  private prepare(config: DeviceConfig): DeviceRun {
    let plan: ReadRequest[];
    const codecs = new Map<string, PointCodec>();
    try {
      plan = planReads(config.points, config.limits);
      for (const point of config.points) codecs.set(point.id, compilePoint(point));
    } catch (err) {
      throw new Error(`device "${config.name}": ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    return {
      config, plan, codecs,
      log: this.options.logger.child({ device: config.name, unit: config.unitId }),
      startAt: 0, k: 0, running: undefined, cancelTimer: undefined, consecutiveFailures: 0, overrunLogged: false,
      stats: { device: config.name, state: 'unknown', cycles: 0, failedCycles: 0, skippedCycles: 0, lastCycleMs: 0 },
    };
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    const now = this.clock.now();
    for (const run of this.runs) {
      run.startAt = now + Math.floor(this.random() * run.config.pollIntervalMs);
      run.k = 0;
      this.schedule(run);
    }
  }

  /** Stops scheduling and waits for cycles in progress (stop the bus to cut them short). */
  async stop(): Promise<void> {
    this.started = false;
    for (const run of this.runs) {
      run.cancelTimer?.();
      run.cancelTimer = undefined;
    }
    await Promise.all(this.runs.map((run) => run.running));
  }

  stats(): DevicePollStats[] {
    return this.runs.map((run) => ({ ...run.stats }));
  }

  /** Runs one cycle of a device now and returns its sample (CLI `poll --once`); not emitted. */
  async pollOnce(device: string): Promise<Sample> {
    const run = this.runs.find((r) => r.config.name === device);
    if (!run) throw new Error(`unknown device "${device}"`);
    return this.readDevice(run);
  }

  private schedule(run: DeviceRun): void {
    const due = run.startAt + run.k * run.config.pollIntervalMs;
    run.cancelTimer = this.timers.setTimer(() => this.tick(run), due - this.clock.now());
  }

  private tick(run: DeviceRun): void {
    if (!this.started) return;
    const period = run.config.pollIntervalMs;
    // A timer that fired more than a period late (event loop stalled, clock jumped) lost slots.
    const slot = Math.max(run.k, Math.floor((this.clock.now() - run.startAt) / period));
    run.stats.skippedCycles += slot - run.k;
    run.k = slot + 1;
    this.schedule(run);
    if (run.running) {
      run.stats.skippedCycles += 1;
      if (!run.overrunLogged) {
        run.overrunLogged = true;
        run.log.warn({ periodMs: period }, 'poll cycle overrun, skipping');
      }
      return;
    }
    run.overrunLogged = false;
    run.running = this.cycle(run).finally(() => {
      run.running = undefined;
    });
  }

  private async cycle(run: DeviceRun): Promise<void> {
    try {
      const sample = await this.readDevice(run);
      if (Object.keys(sample.values).length > 0) this.options.sink.onSample(sample);
    } catch (err) {
      run.log.error({ err }, 'poll cycle failed');
    }
  }

  private async readDevice(run: DeviceRun): Promise<Sample> {
    const started = this.clock.now();
    const sample: Sample = { device: run.config.name, ts: started, values: {}, errors: [] };
    let answered = false;
    let abort: unknown;
    for (const request of run.plan) {
      if (abort !== undefined) {
        sample.errors.push(describeError(request, abort));
        continue;
      }
      try {
        const block = await this.options.bus.read(run.config.unitId, request.table, request.start, request.count);
        answered = true;
        this.decodeInto(run, request, block, sample);
      } catch (err) {
        // An exception reply proves the device is there: only the request is wrong.
        if (err instanceof ModbusExceptionError && !err.isGatewayNoResponse) answered = true;
        sample.errors.push(describeError(request, err));
        if (ABORTS_CYCLE.some((type) => err instanceof type)) abort = err;
      }
    }
    run.stats.cycles += 1;
    run.stats.lastCycleMs = this.clock.now() - started;
    run.stats.lastError = sample.errors[0]?.message;
    this.updateState(run, answered, abort ?? sample.errors[0]);
    return sample;
  }

  private decodeInto(run: DeviceRun, request: ReadRequest, block: ReadBlock, sample: Sample): void {
    for (const point of request.points) {
      try {
        sample.values[point.id] = (run.codecs.get(point.id) as PointCodec).decode(block);
      } catch (err) {
        sample.errors.push({ ...describeError(request, err), points: [point.id] });
      }
    }
  }

  private updateState(run: DeviceRun, answered: boolean, failure: unknown): void {
    if (answered) {
      run.consecutiveFailures = 0;
      this.transition(run, 'online', 'answering');
      return;
    }
    if (run.plan.length === 0) return;
    run.stats.failedCycles += 1;
    run.consecutiveFailures += 1;
    const reason = failure instanceof Error ? failure.message : 'no answer';
    if (failure instanceof UnitCoolingDownError || run.consecutiveFailures >= this.offlineAfter) {
      this.transition(run, 'offline', reason);
    }
  }

  private transition(run: DeviceRun, state: DeviceState, reason: string): void {
    if (run.stats.state === state) return;
    run.stats.state = state;
    if (state === 'online') run.log.info('device online');
    else run.log.warn({ reason }, 'device offline');
    try {
      this.options.sink.onDeviceState(run.config.name, state, reason);
    } catch (err) {
      run.log.error({ err }, 'sample sink failed');
    }
  }
}

function describeError(request: ReadRequest, err: unknown): SampleError {
  return {
    points: request.points.map((p) => p.id),
    table: request.table,
    start: request.start,
    count: request.count,
    kind: err instanceof Error ? err.name : 'Error',
    message: err instanceof Error ? err.message : String(err),
  };
}
