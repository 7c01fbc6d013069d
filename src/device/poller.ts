// One Poller per bus: each device on its own drift-free period (next = start + k * period, first run
// jittered within one period), its read plan run through the Bus (poll-cycle.ts), point health
// tracked, and one sample per cycle handed to a sink. A cycle still running when the next is due
// makes that next one skip (counted; the timer is set for the first slot after the cycle ends, so
// skipping costs no timer ticks), so overload never queues work or grows memory. A period of 0
// polls continuously: the next cycle starts as soon as the last one ends.
import type { CompiledDevice } from '../core/config/compile.js';
import type { LearnedReadLimits } from '../core/modbus/plan.js';
import { type Clock, type EpochMs, type Timers, type WallClock, systemClock, systemTimers, systemWallClock } from '../core/time.js';
import { UnitCoolingDownError, UnitLateReplyPendingError } from '../field/modbus/errors.js';
import { runCycle, type CycleOutcome, type Sample } from './poll-cycle.js';
import type { DeviceRun, DevicePollStats, DeviceState, PollerOptions } from './poller-types.js';
import { PointHealth } from './point-health.js';
import { ReadPlanLearner } from './read-plan-learner.js';
import { DeviceIdentityError, IdentityCheck } from './identity-check.js';

export type { PollBus, Sample, SampleError } from './poll-cycle.js';

export type { DeviceState, SampleSink, DevicePollStats, PollerOptions } from './poller-types.js';

export const DEFAULT_CONTINUOUS_RETRY_MS = 1000;

export class Poller {
  private readonly runs: DeviceRun[];
  private readonly clock: Clock;
  private readonly wall: WallClock;
  private readonly timers: Timers;
  private readonly random: () => number;
  private readonly offlineAfter: number;
  private readonly continuousRetryMs: number;
  private started = false;

  constructor(private readonly options: PollerOptions) {
    this.clock = options.clock ?? systemClock;
    this.wall = options.wall ?? systemWallClock;
    this.timers = options.timers ?? systemTimers;
    this.random = options.random ?? Math.random;
    this.offlineAfter = Math.max(1, options.offlineAfterFailedCycles ?? 3);
    this.continuousRetryMs = options.continuousRetryMs ?? DEFAULT_CONTINUOUS_RETRY_MS;
    this.runs = options.devices.map((device) => this.prepare(device));
  }

  private prepare({ config, codecs, plan }: CompiledDevice): DeviceRun {
    const log = this.options.logger.child({ device: config.name, unit: config.unitId });
    const learner = new ReadPlanLearner(config.points, config.limits, log, plan);
    return {
      config, learner, codecs, log, health: new PointHealth(log),
      startAt: 0, k: 0, running: undefined, outOfTurn: undefined, cancelTimer: undefined, consecutiveFailures: 0, overrun: undefined, lastCycleRead: false, lastReadCycleAt: 0, removed: false, owner: new AbortController(),
      identity: config.identification ? new IdentityCheck(config.identification, log) : undefined,
      stats: { device: config.name, state: 'unknown', cycles: 0, failedCycles: 0, cyclesWithValues: 0, skippedCycles: 0, lastCycleMs: 0 },
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

  /** A device joins this bus's schedule (a reload); its first cycle is jittered within one period. */
  addDevice(device: CompiledDevice): void {
    if (this.runs.some((r) => r.config.name === device.config.name)) throw new Error(`device "${device.config.name}" is already polled`);
    const run = this.prepare(device);
    this.runs.push(run);
    if (!this.started) return;
    run.startAt = this.clock.now() + Math.floor(this.random() * run.config.pollIntervalMs);
    this.schedule(run);
  }

  /**
   * A device leaves the schedule (a reload): its timer is cancelled, its reads still queued leave
   * the bus queue (the one on the line finishes) and its cycle in progress is awaited; the other
   * devices' schedules are not touched. False when it was not polled here.
   */
  async removeDevice(name: string): Promise<boolean> {
    const index = this.runs.findIndex((r) => r.config.name === name);
    if (index < 0) return false;
    const [run] = this.runs.splice(index, 1);
    run.cancelTimer?.();
    run.cancelTimer = undefined;
    run.removed = true;
    run.owner.abort(new Error(`device "${name}" removed from the schedule`));
    await Promise.all([run.running, run.outOfTurn]);
    return true;
  }

  /** Names of the devices this poller runs. */
  deviceNames(): string[] {
    return this.runs.map((r) => r.config.name);
  }

  /** Stops scheduling and waits for cycles in progress (stop the bus to cut them short). */
  async stop(): Promise<void> {
    this.started = false;
    for (const run of this.runs) {
      run.cancelTimer?.();
      run.cancelTimer = undefined;
    }
    await Promise.all(this.runs.flatMap((run) => [run.running, run.outOfTurn]));
  }

  stats(): DevicePollStats[] {
    return this.runs.map((run) => ({
      ...run.stats,
      overrunning: run.overrun !== undefined,
      failingPoints: run.health.status(),
      pointFailures: run.health.failureTransitions(),
      learned: run.learner.limitsLearned(),
      ...(run.identity?.status() ? { identification: run.identity.status() } : {}),
    }));
  }

  /** What polls of `device` learned (cuts, isolated points, lengths), for reads outside the poll. */
  readLimits(device: string): LearnedReadLimits {
    return this.runs.find((r) => r.config.name === device)?.learner.readLimits() ?? {};
  }

  /** Runs one cycle of a device now and returns its sample (CLI `poll --once`); not emitted. */
  async pollOnce(device: string): Promise<Sample> {
    const run = this.runs.find((r) => r.config.name === device);
    if (!run) throw new Error(`unknown device "${device}"`);
    return this.readDevice(run);
  }

  /**
   * Runs one cycle of a device now, out of turn (after the cycle in progress, never beside it), and
   * hands its sample to the sink like any cycle. The scheduled slot it overlaps is skipped.
   */
  pollNow(device: string): Promise<Sample> {
    const run = this.runs.find((r) => r.config.name === device);
    if (!run) return Promise.reject(new Error(`unknown device "${device}"`));
    const result = (run.outOfTurn ?? Promise.resolve())
      .then(() => run.running)
      .then(() => this.readDevice(run))
      .then((sample) => {
        if (Object.keys(sample.values).length > 0) this.options.sink.onSample(sample);
        return sample;
      });
    const settled = result.then(() => undefined, () => undefined);
    run.outOfTurn = settled;
    void settled.then(() => {
      if (run.outOfTurn === settled) run.outOfTurn = undefined;
    });
    return result;
  }

  private schedule(run: DeviceRun): void {
    const due = run.startAt + run.k * run.config.pollIntervalMs;
    run.cancelTimer = this.timers.setTimer(() => this.tick(run), due - this.clock.now());
  }

  private tick(run: DeviceRun): void {
    run.cancelTimer = undefined;
    if (!this.started || run.removed || run.running) return;
    if (run.outOfTurn) {
      void run.outOfTurn.then(() => this.afterCycle(run));
      return;
    }
    const period = run.config.pollIntervalMs;
    if (period > 0) {
      // A timer that fired more than a period late (event loop stalled, clock jumped) lost slots.
      const slot = Math.max(run.k, Math.floor((this.clock.now() - run.startAt) / period));
      run.stats.skippedCycles += slot - run.k;
      run.k = slot + 1;
    }
    run.running = this.cycle(run).finally(() => {
      run.running = undefined;
      this.afterCycle(run);
    });
  }

  /** Sets the timer for the first slot not yet past; the slots the cycle overran are skipped. */
  private afterCycle(run: DeviceRun): void {
    if (!this.started || run.removed) return;
    const period = run.config.pollIntervalMs;
    const now = this.clock.now();
    if (period === 0) {
      // Continuous: straight on while the device reads (each cycle waits on the line, so the
      // event loop runs in between); pause after a cycle that read nothing.
      if (run.lastCycleRead) this.tick(run);
      else run.cancelTimer = this.timers.setTimer(() => this.tick(run), this.continuousRetryMs);
      return;
    }
    const firstDue = Math.ceil((now - run.startAt) / period);
    const missed = Math.max(0, firstDue - run.k);
    run.stats.skippedCycles += missed;
    run.k += missed;
    this.trackOverrun(run, missed > 0, now);
    this.schedule(run);
  }

  private trackOverrun(run: DeviceRun, overran: boolean, now: number): void {
    const fields = () => ({ periodMs: run.config.pollIntervalMs, lastCycleMs: run.stats.lastCycleMs });
    if (overran && !run.overrun) {
      run.overrun = { since: now, skippedBefore: run.stats.skippedCycles };
      run.log.warn(fields(), 'poll cycle overrun, skipping');
    } else if (!overran && run.overrun) {
      const skipped = run.stats.skippedCycles - run.overrun.skippedBefore;
      run.log.info({ ...fields(), overrunForMs: now - run.overrun.since, skipped }, 'poll cycles back on time');
      run.overrun = undefined;
    }
  }

  private async cycle(run: DeviceRun): Promise<void> {
    try {
      const sample = await this.readDevice(run);
      run.lastCycleRead = Object.keys(sample.values).length > 0;
      if (run.lastCycleRead && !run.removed) this.options.sink.onSample(sample);
    } catch (err) {
      run.log.error({ err }, 'poll cycle failed');
    }
  }

  private async readDevice(run: DeviceRun): Promise<Sample> {
    const started = this.clock.now();
    const sample: Sample = { device: run.config.name, ts: this.wall.wallNow(), at: started, values: {}, errors: [] };
    run.lastCycleRead = false;
    const otherModel = await run.identity?.beforeCycle(this.options.bus, run.config.unitId);
    if (otherModel) return this.notPolled(run, sample, otherModel);
    const outcome = await runCycle({
      bus: this.options.bus, unitId: run.config.unitId, codecs: run.codecs, learner: run.learner, now: () => this.clock.now(), signal: run.owner.signal,
    }, sample);
    // Taken off mid-cycle: what it read is handed back, but nothing is learned of its state.
    if (run.removed) return sample;
    const read = Object.keys(sample.values);
    run.identity?.afterCycle(read.length > 0);
    run.health.update(read, outcome.failures, this.clock.now(), this.wall.wallNow());
    run.stats.cycles += 1;
    run.stats.lastCycleMs = this.clock.now() - started;
    run.stats.lastError = sample.errors[0]?.message;
    this.updateState(run, read.length > 0, outcome, sample);
    if (read.length > 0) {
      run.lastReadCycleAt = started;
      run.stats.cyclesWithValues += 1;
    }
    return sample;
  }

  /** Another model than the profile's: its points are not read, and it is offline as the device the site names. */
  private notPolled(run: DeviceRun, sample: Sample, error: DeviceIdentityError): Sample {
    const first = run.config.identification!.registers[0].point;
    sample.errors.push({ points: run.config.points.map((p) => p.id), table: first.table, start: first.address, count: first.length, kind: DeviceIdentityError.name, message: error.message });
    run.stats.cycles += 1;
    run.stats.failedCycles += 1;
    run.stats.lastError = error.message;
    this.transition(run, 'offline', error.message, this.wall.wallNow());
    return sample;
  }

  private updateState(run: DeviceRun, gotValues: boolean, outcome: CycleOutcome, sample: Sample): void {
    if (gotValues) {
      run.consecutiveFailures = 0;
      // The cycle's own start: its sample follows with that time, so the two reports keep their order.
      this.transition(run, 'online', 'answering', sample.ts);
      return;
    }
    if (run.config.points.length === 0) return;
    // Held back by the bus's late-reply guard alone: nothing was asked, so nothing is known of the
    // device (a lost frame must not take it offline; repeated failures cool it down, and that does).
    if (sample.errors.length > 0 && sample.errors.every((e) => e.kind === UnitLateReplyPendingError.name)) return;
    run.stats.failedCycles += 1;
    run.consecutiveFailures += 1;
    const abort = outcome.abort;
    const failure = abort instanceof Error ? abort.message : (sample.errors[0]?.message ?? 'no answer');
    // A length learned since the device last read: its failures come from the long reads (their timeouts, the guard after them).
    const lesson = run.learner.lengthLessonSince(run.lastReadCycleAt);
    const detail = lesson ? `${lesson} (${failure})` : failure;
    // The device answers, but for none of its points: not online, and no need to wait for it.
    const noPointReads = run.health.failingCount() >= run.config.points.length;
    const reason = noPointReads ? `no point reads (${detail})` : detail;
    if (noPointReads || outcome.abort instanceof UnitCoolingDownError || run.consecutiveFailures >= this.offlineAfter) {
      this.transition(run, 'offline', reason, this.wall.wallNow());
    }
  }

  private transition(run: DeviceRun, state: DeviceState, reason: string, ts: EpochMs): void {
    if (run.stats.state === state) return;
    run.stats.state = state;
    if (state === 'offline') run.identity?.recheck();
    if (state === 'online') run.log.info('device online');
    else run.log.warn({ reason }, 'device offline');
    try {
      this.options.sink.onDeviceState(run.config.name, state, reason, ts);
    } catch (err) {
      run.log.error({ err }, 'sample sink failed');
    }
  }
}
