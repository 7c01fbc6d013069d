// How a Bus wires its slow units (slow-units.ts: the late-reply guard and the busy repeats) to its
// queue, its outcomes and its transport: a repeat is queued again, a late reply counted and the
// queue looked at again, a guard's length told to the port that awaits the late reply.
import type { BusConfig } from '../../core/config/site-types.js';
import type { Clock, Timers } from '../../core/time.js';
import type { BusOutcomes, Counter } from './bus-outcomes.js';
import type { Job } from './bus-types.js';
import { SlowUnits } from './slow-units.js';
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
  isUp(): boolean;
  /** Puts a repeat back in the queue (and pumps); false when the queue is full. */
  requeue(job: Job): boolean;
  downError(): Error;
  pump(): void;
}

export function wireSlowUnits(w: SlowWiring): SlowUnits<Job> {
  const slow = new SlowUnits<Job>({
    config: w.config, clock: w.clock, timers: w.timers, interFrameDelayMs: w.interFrameDelayMs,
    busyBackoffMs: w.busyBackoffMs,
    watchesLateReplies: w.config.kind !== 'tcp' && w.transport.onLateReply !== undefined,
    isUp: w.isUp,
    requeue: w.requeue,
    downError: w.downError,
    onBusyRepeat: () => { w.counters.busyRetries += 1; },
    onLate: (unit, answeredAfterMs, first) => {
      w.outcomes.late(unit, answeredAfterMs, w.config.timeoutMs, first);
      w.pump();
    },
    guarding: (unit, shape, guardMs, wholeUnit) => {
      if (shape) w.transport.watchLateReplyFor?.(unit, shape, guardMs);
      if (wholeUnit) w.outcomes.heldBack(unit, guardMs);
    },
  });
  w.transport.onLateReply?.((unit, answeredAfterMs, request) => slow.lateReply(unit, answeredAfterMs, request));
  return slow;
}
