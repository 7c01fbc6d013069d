// What the bus learns from each finished request: counters, unit health (cool-down), whether the
// line still gives good replies (reopen after too long without), and discarded replies. Logged
// once per transition; discards at debug within a budget.
import type { Logger } from '../../core/logger.js';
import { DEFAULT_REOPEN_AFTER_SILENCE_MS, LogBudget, SilenceWatch } from './bus-supervision.js';
import type { BusProgress, BusStats } from './bus-stats.js';
import type { Clock } from '../../core/time.js';
import type { HealthTransition, UnitHealthTracker } from './cooldown.js';
import { LineEchoError, ModbusExceptionError, ModbusFrameError, ModbusTimeoutError, PortClosedError } from './errors.js';
import { FOREIGN_TRANSACTION_ID } from './transport-types.js';

export type Counter = 'transactions' | 'timeouts' | 'timeoutRepeats' | 'exceptions' | 'busyRetries' | 'frameErrors' | 'otherErrors'
  | 'cooldownRejects' | 'downRejects' | 'queueRejects' | 'discardedReplies' | 'lateReplies' | 'lateGuardRejects' | 'cancelled' | 'expired';

/** Good replies in a row that end a spell of replies with foreign transaction ids (one warning a spell). */
const MATCHED_TO_END_FOREIGN_SPELL = 10;

export function zeroCounters(): Record<Counter, number> {
  return {
    transactions: 0, timeouts: 0, timeoutRepeats: 0, exceptions: 0, busyRetries: 0, frameErrors: 0, otherErrors: 0,
    cooldownRejects: 0, downRejects: 0, queueRejects: 0, discardedReplies: 0, lateReplies: 0, lateGuardRejects: 0, cancelled: 0, expired: 0,
  };
}

export interface OutcomeContext {
  log: Logger;
  clock: Clock;
  health: UnitHealthTracker;
  counters: Record<Counter, number>;
  reopenAfterSilenceMs: number | undefined;
  isUp(): boolean;
  /** The port is gone (a request found it closed). */
  lost(reason: string): void;
  /** The port is open but no good reply came for too long. */
  reopen(reason: string): void;
}

export class BusOutcomes {
  private readonly silence: SilenceWatch;
  private readonly discardLog = new LogBudget();
  private readonly limitMs: number;
  /** Units this bus has been asked about: all in cool-down means the bus may legitimately be idle. */
  private readonly unitsSeen = new Set<number>();
  private queueFullLogged = false;
  /** Good replies since the last reply discarded for its transaction id (undefined: none in this spell). */
  private goodSinceForeignId: number | undefined;
  /** Units that answered "acknowledge" (exception 5): monotonic ms until which their silence is their work, not a failure. */
  private readonly processingUntil = new Map<number, number>();

  constructor(private readonly ctx: OutcomeContext) {
    this.limitMs = ctx.reopenAfterSilenceMs ?? DEFAULT_REOPEN_AFTER_SILENCE_MS;
    this.silence = new SilenceWatch(this.limitMs);
  }

  /** The echo hint, while the line's echo does not match the bus setting (logged once per spell). */
  echoProblem: string | undefined;

  get goodReplies(): number {
    return this.silence.goodReplies;
  }

  get silenceReopens(): number {
    return this.silence.reopens;
  }

  seen(unit: number): void {
    this.unitsSeen.add(unit);
  }

  opened(): void {
    this.silence.onOpen(this.ctx.clock.now());
  }

  /** What the line's replies came to, for the bus's stats: counters, units cooling down, the echo hint. */
  figures(): Pick<BusStats, Counter | 'unitsCoolingDown' | 'coolingDownUnits' | 'goodReplies' | 'silenceReopens' | 'echoProblem'> {
    const { counters, health, clock } = this.ctx;
    return {
      ...counters,
      unitsCoolingDown: health.coolingDownCount(),
      coolingDownUnits: health.coolingDown(clock.now()),
      goodReplies: this.silence.goodReplies,
      silenceReopens: this.silence.reopens,
      ...(this.echoProblem ? { echoProblem: this.echoProblem } : {}),
    };
  }

  progress(): BusProgress {
    const allCoolingDown = this.unitsSeen.size > 0 && this.ctx.health.coolingDownCount() >= this.unitsSeen.size;
    return { goodReplies: this.silence.goodReplies, expected: this.ctx.isUp() && this.silence.failing && !allCoolingDown };
  }

  answered(unit: number): void {
    this.processingUntil.delete(unit);
    this.echoProblem = undefined;
    this.good();
    this.transition(unit, this.ctx.health.onAnswer(unit, this.ctx.clock.now()));
  }

  /**
   * `unit` answered "acknowledge" (exception 5): it accepted a request that takes long and may not
   * answer while it works (Modbus Application Protocol 1.1b3, section 7). Until `untilMs` its
   * timeouts are no failure for cool-down (nor a timeout in a row: a read lost then is repeated).
   */
  acknowledged(unit: number, untilMs: number): void {
    this.processingUntil.set(unit, Math.max(untilMs, this.processingUntil.get(unit) ?? 0));
  }

  failed(unit: number, isRaw: boolean, err: unknown, isProbe: boolean): void {
    const { health, counters, clock } = this.ctx;
    const now = clock.now();
    if (err instanceof ModbusTimeoutError) {
      counters.timeouts += 1;
      this.silent();
      if (now < (this.processingUntil.get(unit) ?? 0)) health.onInconclusive(unit, isProbe);
      else this.transition(unit, health.onNoAnswer(unit, now, isProbe, `timeouts (no answer within ${err.timeoutMs} ms)`));
    } else if (err instanceof ModbusExceptionError) {
      counters.exceptions += 1;
      this.good(); // a matched exception reply: the line works
      // A gateway answering "target did not respond" is a timeout seen through the gateway; a unit
      // still busy after every repeat is as unavailable as a silent one.
      const unavailable = err.isGatewayNoResponse || err.isBusy;
      const what = err.isBusy ? `"busy" answers (exception ${err.code} to every repeat)` : `gateway answers (exception ${err.code})`;
      this.transition(unit, unavailable ? health.onNoAnswer(unit, now, isProbe, what, err.isBusy) : health.onAnswer(unit, now));
    } else if (err instanceof ModbusFrameError && !isRaw) {
      if (err instanceof LineEchoError) this.echoMismatch(unit, err);
      // A reply that cannot be trusted is no answer: a unit that only sends garbage cools down too.
      counters.frameErrors += 1;
      this.silent();
      this.transition(unit, health.onNoAnswer(unit, now, isProbe, 'malformed replies'));
    } else {
      counters[err instanceof ModbusFrameError ? 'frameErrors' : 'otherErrors'] += 1;
      if (!isRaw) health.onInconclusive(unit, isProbe);
      if (err instanceof PortClosedError && this.ctx.isUp()) this.ctx.lost(err.reason);
    }
  }

  private echoMismatch(unit: number, err: LineEchoError): void {
    if (this.echoProblem === err.hint) return;
    this.echoProblem = err.hint;
    this.ctx.log.warn({ unit, hint: err.hint }, 'bus echo setting does not match the line');
  }

  /**
   * The reply of a timed-out request came after all: counted, a failure for cool-down, and the
   * unit's first one is a warning with how late it answered against the configured timeout.
   */
  late(unit: number, answeredAfterMs: number, timeoutMs: number, first: boolean): void {
    this.ctx.counters.lateReplies += 1;
    if (first) {
      this.ctx.log.warn({ unit, answeredAfterMs, timeoutMs }, 'unit answers after its timeout, late replies are discarded: raise timeoutMs above its answer time');
    } else {
      this.ctx.log.debug({ unit, answeredAfterMs, timeoutMs }, 'late reply discarded');
    }
    this.transition(unit, this.ctx.health.onLate(unit, this.ctx.clock.now(), `late replies (answered ${answeredAfterMs} ms after the request, timeout ${timeoutMs} ms)`));
  }

  /**
   * A unit seen answering late timed out again: it is asked nothing until its late reply came or
   * `guardMs` passed. Logged, so a unit not polled for that long is never a silent one.
   */
  /** The unit answered in time long enough: no longer treated as answering late (late-guard.ts). */
  lateForgotten(unit: number): void {
    this.ctx.log.info({ unit }, 'unit answers in time again, its late replies forgotten');
  }

  heldBack(unit: number, guardMs: number): void {
    this.ctx.log.info({ unit, guardMs }, 'unit held back by the late-reply guard');
  }

  /** A request refused because the queue was full: counted, logged once until it has drained to half. */
  queueRefused(limit: number): void {
    this.ctx.counters.queueRejects += 1;
    if (this.queueFullLogged) return;
    this.queueFullLogged = true;
    this.ctx.log.warn({ limit }, 'bus queue full');
  }

  queueDrained(size: number, limit: number): void {
    if (size <= limit / 2) this.queueFullLogged = false;
  }

  discarded(reason: string): void {
    this.ctx.counters.discardedReplies += 1;
    // A TCP device answering with ids it was not asked (always 0, say) only shows as timeouts: say why, once a spell.
    if (reason.startsWith(FOREIGN_TRANSACTION_ID)) {
      if (this.goodSinceForeignId === undefined) this.ctx.log.warn({ reason }, 'bus replies discarded: transaction id not awaited');
      this.goodSinceForeignId = 0;
    }
    if (this.discardLog.take(this.ctx.clock.now())) {
      this.ctx.log.debug({ reason, discarded: this.ctx.counters.discardedReplies }, 'reply discarded');
    }
  }

  private good(): void {
    if (this.silence.onGood(this.ctx.clock.now())) this.ctx.log.info('bus answering again');
    if (this.goodSinceForeignId !== undefined && ++this.goodSinceForeignId >= MATCHED_TO_END_FOREIGN_SPELL) {
      this.goodSinceForeignId = undefined;
      this.ctx.log.info('bus transaction ids match again');
    }
  }

  /** A failed exchange: after too long without any good reply, reopen the port. */
  private silent(): void {
    if (!this.ctx.isUp()) return;
    const verdict = this.silence.onFailure(this.ctx.clock.now());
    if (verdict === 'ok') return;
    if (verdict === 'reopen-first') this.ctx.log.warn({ limitMs: this.limitMs }, 'bus silent, reopening');
    else this.ctx.log.debug({ limitMs: this.limitMs, reopens: this.silence.reopens }, 'bus still silent, reopening');
    this.ctx.reopen(`no good reply for ${this.limitMs} ms`);
  }

  private transition(unit: number, transition: HealthTransition | undefined): void {
    if (!transition) return;
    const log = this.ctx.log;
    switch (transition.kind) {
      case 'cooldown-started':
        log.warn({ unit, timeouts: transition.timeouts, failures: transition.failures, lastFailure: transition.lastFailure, cooldownMs: transition.delayMs }, 'unit cooling down');
        break;
      case 'cooldown-extended':
        log.debug({ unit, cooldownMs: transition.delayMs, level: transition.level }, 'unit still not answering');
        break;
      case 'recovered':
        log.info({ unit, silentForMs: transition.cooledForMs }, 'unit answering again');
        break;
    }
  }
}
