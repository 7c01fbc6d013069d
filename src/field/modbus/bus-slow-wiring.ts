// How a Bus wires its slow units, the late-reply watch (late-reply-watch.ts: the guard and the
// repeats after a timeout) and the busy repeats (busy-retries.ts), to its queue, its outcomes and
// its transport: a repeat is queued again (after a timeout first in line), a late reply counted and
// the queue looked at again, a guard's length told to the port that awaits the late reply.
import type { BusConfig } from '../../core/config/site-types.js';
import type { Clock, Timers } from '../../core/time.js';
import type { BusOutcomes, Counter } from './bus-outcomes.js';
import type { Job } from './bus-types.js';
import type { UnitHealthTracker } from './cooldown.js';
import type { RequestQueue } from './request-queue.js';
import { BusyRetries } from './busy-retries.js';
import { LateReplyWatch } from './late-reply-watch.js';
import type { ModbusTransport } from './transport.js';

export interface SlowWiring {
  config: BusConfig;
  clock: Clock;
  timers: Timers;
  interFrameDelayMs: number;
  busyBackoffMs: number | undefined;
  transport: ModbusTransport;
  outcomes: BusOutcomes;
  counters: Record<Counter, number>;
  health: UnitHealthTracker;
  queue: RequestQueue<Job>;
  isUp(): boolean;
  downError(): Error;
  pump(): void;
}

export interface SlowUnits {
  late: LateReplyWatch<Job>;
  busy: BusyRetries<Job>;
}

export function wireSlowUnits(w: SlowWiring): SlowUnits {
  const busy = new BusyRetries<Job>({
    config: w.config, clock: w.clock, timers: w.timers, busyBackoffMs: w.busyBackoffMs, interFrameDelayMs: w.interFrameDelayMs,
    isUp: w.isUp, requeue: (job) => requeue(w, job, false), downError: w.downError,
    onBusyRepeat: () => { w.counters.busyRetries += 1; },
  });
  const late = new LateReplyWatch<Job>({
    config: w.config, clock: w.clock,
    watchesLateReplies: w.config.kind !== 'tcp' && w.transport.onLateReply !== undefined,
    isUp: w.isUp,
    requeueFirst: (job) => requeue(w, job, true),
    timeoutsInRow: (unit) => w.health.view(unit).consecutiveTimeouts,
    onTimeoutRepeat: () => {
      w.counters.timeouts += 1;
      w.counters.timeoutRepeats += 1;
    },
    onLateForgotten: (unit) => w.outcomes.lateForgotten(unit),
    onLate: (unit, answeredAfterMs, first) => {
      w.outcomes.late(unit, answeredAfterMs, w.config.timeoutMs, first);
      w.pump();
    },
    guarding: (unit, shape, guardMs, wholeUnit) => {
      if (shape) w.transport.watchLateReplyFor?.(unit, shape, guardMs);
      if (wholeUnit) w.outcomes.heldBack(unit, guardMs);
    },
  });
  w.transport.onLateReply?.((unit, answeredAfterMs, request) => late.lateReply(unit, answeredAfterMs, request));
  return { late, busy };
}

/** Puts a repeat back in the queue (first in line: a repeat after a timeout) and pumps; false when full. */
function requeue(w: SlowWiring, job: Job, first: boolean): boolean {
  if (!(first ? w.queue.pushFirst(job, job.priority) : w.queue.push(job, job.priority))) return false;
  w.pump();
  return true;
}
