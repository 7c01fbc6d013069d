// The pump of a Bus: starts as many queued requests as the line allows now (one at a time on RTU,
// `maxInFlight` on Modbus TCP, a timed-out unit's requests beside the slots), keeps the silence
// between frames, performs each request on the transport and settles it: its outcome counted
// (bus-outcomes.ts), a failure handed to the busy repeats and the late-reply watch, every finished
// read and write told to the settled listeners.
import type { Clock, Timers } from '../../core/time.js';
import type { Logger } from '../../core/logger.js';
import type { BusAdmission } from './bus-admission.js';
import type { BusOutcomes, Counter } from './bus-outcomes.js';
import { addressesUnit, perform, transactionsOf } from './bus-request.js';
import type { SlowUnits } from './bus-slow-wiring.js';
import type { Job } from './bus-types.js';
import { BesideLane } from './beside-lane.js';
import { ModbusExceptionError, RequestCancelledError } from './errors.js';
import { configuredGuardMs } from './late-guard.js';
import type { BusConfig } from '../../core/config/site-types.js';
import type { JobOwners } from './job-owners.js';
import { LineGap } from './line-gap.js';
import type { RequestQueue } from './request-queue.js';
import type { SettledListeners } from './settled-listeners.js';
import type { ModbusTransport } from './transport.js';
import { WakeTimer } from './wake-timer.js';

export interface BusPumpParts {
  config: BusConfig;
  tcp: boolean;
  maxInFlight: number;
  interFrameDelayMs: number;
  clock: Clock;
  timers: Timers;
  log: Logger;
  queue: RequestQueue<Job>;
  admission: BusAdmission;
  transport: ModbusTransport;
  counters: Record<Counter, number>;
  outcomes: BusOutcomes;
  slow: () => SlowUnits;
  settledListeners: SettledListeners;
  owners: () => JobOwners;
  isUp(): boolean;
}

export class BusPump {
  private inFlightCount = 0;
  private busyMs = 0;
  private readonly beside: BesideLane;
  private readonly gap: LineGap;
  /** Requests left waiting for a guarded or cooling unit: looked at again when one may go or must fail. */
  private readonly wake: WakeTimer;

  constructor(private readonly p: BusPumpParts) {
    this.beside = new BesideLane(p.tcp, p.log);
    this.gap = new LineGap(p.interFrameDelayMs, p.clock, p.timers, () => this.pump());
    this.wake = new WakeTimer(p.clock, p.timers, () => this.pump());
  }

  get inFlight(): number {
    return this.inFlightCount;
  }

  /** Time the line spent on requests (ms). */
  get busyTimeMs(): number {
    return this.busyMs;
  }

  /** The port opened: the silence before the first frame, then the queue. */
  opened(): void {
    this.gap.startAt(this.p.clock.now());
    this.pump();
  }

  /** The line's timers stop (the bus stops or goes down). */
  cancelTimers(): void {
    this.gap.cancel();
    this.wake.cancel();
  }

  /** Starts as many queued requests as the line allows now. */
  pump(): void {
    const { queue, admission, outcomes } = this.p;
    outcomes.queueDrained(queue.size, queue.limit);
    if (!this.p.isUp() || this.gap.waiting) return;
    for (;;) {
      // A request to a unit that timed out goes beside the slots (Modbus TCP, beside-lane.ts).
      const slotFree = this.inFlightCount - this.beside.inFlight < this.p.maxInFlight;
      if (queue.size === 0 || (!slotFree && !this.beside.free)) return;
      if (this.gap.holds()) return;
      const job = queue.shift((j) => admission.mayStart(j) && (this.beside.takes(j.unit) ? this.beside.free : slotFree));
      if (!job) break; // every waiting request is for a unit busy, guarded or cooling down (or no slot is free)
      const admitted = admission.admit(job);
      if (admitted.kind === 'refuse') {
        job.reject(admitted.error);
        continue;
      }
      job.admitted = admitted.kind;
      this.beside.start(job);
      void this.execute(job, admitted.kind === 'probe', admitted.pieceCount);
    }
    this.wake.at(admission.takeWakeAt());
  }

  /** `pieceCount`: a read that goes as shorter reads (a late reply of its shape may still come). */
  private async execute(job: Job, isProbe: boolean, pieceCount?: number): Promise<void> {
    const { clock, transport, counters, outcomes, settledListeners } = this.p;
    const slow = this.p.slow();
    this.inFlightCount += 1;
    this.p.admission.started(job.unit);
    const started = clock.now();
    job.onStart?.();
    let silenceKept = false;
    try {
      counters.transactions += transactionsOf(job.op, pieceCount);
      const result = await perform(transport, job.unit, job.op, job.timeoutMs, pieceCount, job.signal);
      // The transport already listened through t3.5 after the reply: no second gap needed.
      silenceKept = addressesUnit(job.op) && transport.keepsSilenceAfterReply === true;
      if (addressesUnit(job.op)) outcomes.answered(job.unit);
      if (addressesUnit(job.op)) slow.late.answered(job.unit, pieceCount === undefined ? job.repeatShape : undefined);
      this.beside.answered(job.unit);
      if (job.op.kind !== 'raw') settledListeners.notify(job.unit, job.op, { ok: true, result }, clock.now());
      job.resolve(result);
    } catch (err) {
      // Its owner left between two of its transactions: the unit answered, nothing more was sent.
      if (err instanceof RequestCancelledError) return this.p.owners().stoppedBetween(job, err);
      this.beside.failed(job.unit, err, job.lane === 'while-beside');
      // Accepted and at work: as long to finish as its deadline (cloud work) or a late reply's guard.
      if (err instanceof ModbusExceptionError && err.code === 5) outcomes.acknowledged(job.unit, job.waitUntil ?? clock.now() + configuredGuardMs(this.p.config, job.timeoutMs));
      if (!slow.busy.afterFailure(job, err) && !slow.late.afterFailure(job, err)) {
        outcomes.failed(job.unit, !addressesUnit(job.op), err, isProbe);
        if (job.op.kind !== 'raw') settledListeners.notify(job.unit, job.op, { ok: false, error: err }, clock.now());
        job.reject(err);
      }
    } finally {
      const now = clock.now();
      this.inFlightCount -= 1;
      this.beside.finish(job);
      this.p.admission.finished(job.unit);
      this.busyMs += now - started;
      this.p.queue.charge(job, job.priority, now - started);
      this.gap.startAt(now, silenceKept);
      this.pump();
    }
  }
}
