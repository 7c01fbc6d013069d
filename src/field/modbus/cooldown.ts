// Per-unit health on one bus (pure: time passed in). Each failure (a timeout, a late reply, "busy"
// to the last repeat) adds one to a unit's failure count and each answer takes one off; at
// `afterTimeouts` the unit cools down: its requests fail fast, except one probe per cool-down
// period, so a dead unit costs at most one timeout per period while the other units on the line
// keep their schedule. A unit that fails more often than it answers (late every other time) gets
// there too; a dead one after `afterTimeouts` timeouts in a row. While no unit of the bus answers
// at all, the period does not double, and the first unit back brings the others back with it.
import type { CooldownConfig } from '../../core/config/site-types.js';

export type Admission =
  | { kind: 'go' }
  /** The unit is cooling down and this request is its one probe for the period. */
  | { kind: 'probe' }
  | { kind: 'reject'; retryInMs: number };

export type HealthTransition =
  | { kind: 'cooldown-started'; delayMs: number; timeouts: number; failures: number; lastFailure: string }
  | { kind: 'cooldown-extended'; delayMs: number; level: number }
  | { kind: 'recovered'; cooledForMs: number };

export interface UnitStateView {
  unit: number;
  state: 'ok' | 'cooling-down';
  consecutiveTimeouts: number;
  /** Epoch ms when the next probe is allowed (cooling-down only). */
  nextProbeAt?: number;
  /** How many cool-down periods in a row (0 = first). */
  cooldownLevel: number;
}

/** A unit cooling down, as /status shows it. */
export interface CoolingUnitView {
  unit: number;
  /** Ms until its next probe may go (0: due, or in flight). */
  nextProbeInMs: number;
  /** Cool-down periods in a row (0 = first; each silent probe doubles the period up to its max). */
  cooldownLevel: number;
  /** What put it there, e.g. "timeouts (no answer within 200 ms)". */
  lastFailure: string;
}

interface UnitHealth {
  consecutiveTimeouts: number;
  /** Failures not yet paid back by answers. */
  failures: number;
  /** 0 = not cooling down. */
  cooldownUntil: number;
  cooldownSince: number;
  level: number;
  probing: boolean;
  /** What the last failure was (for the cool-down's reason). */
  lastFailure: string;
}

export class UnitHealthTracker {
  private readonly units = new Map<number, UnitHealth>();
  /** When any unit of the bus last answered: a cool-down that began later is the bus's silence as much as the unit's. */
  private lastBusAnswerAt = 0;

  constructor(private readonly config: CooldownConfig) {}

  private get(unit: number): UnitHealth {
    let health = this.units.get(unit);
    if (!health) {
      health = { consecutiveTimeouts: 0, failures: 0, cooldownUntil: 0, cooldownSince: 0, level: 0, probing: false, lastFailure: 'timeouts' };
      this.units.set(unit, health);
    }
    return health;
  }

  /** Decides whether a request for `unit` may use the line now. */
  admit(unit: number, now: number): Admission {
    const health = this.units.get(unit);
    if (!health || health.cooldownUntil === 0) return { kind: 'go' };
    if (now < health.cooldownUntil) return { kind: 'reject', retryInMs: health.cooldownUntil - now };
    if (health.probing) return { kind: 'reject', retryInMs: 0 };
    health.probing = true;
    return { kind: 'probe' };
  }

  /**
   * Ms until a request for `unit` could be admitted (0: now; undefined: when its probe in flight
   * ends), without taking the probe.
   */
  waitFor(unit: number, now: number): number | undefined {
    const health = this.units.get(unit);
    if (!health || health.cooldownUntil === 0) return 0;
    if (now < health.cooldownUntil) return health.cooldownUntil - now;
    return health.probing ? undefined : 0;
  }

  /** The unit answered (a value or a Modbus exception: either way it is alive). */
  onAnswer(unit: number, now: number): HealthTransition | undefined {
    const silentSince = this.lastBusAnswerAt;
    this.lastBusAnswerAt = now;
    const health = this.units.get(unit);
    if (!health) return undefined;
    health.consecutiveTimeouts = 0;
    health.failures = Math.max(0, health.failures - 1);
    if (health.cooldownUntil === 0) return undefined;
    const cooledForMs = now - health.cooldownSince;
    this.units.delete(unit);
    this.busBack(silentSince, now);
    return { kind: 'recovered', cooledForMs };
  }

  /**
   * The unit did not answer (timeout, or a gateway reporting it unreachable), or stayed busy
   * (`answered`: it is alive, so no timeout in a row: a frame lost next is repeated as after any
   * answer, timeout-repeats.ts); `what` names it for the cool-down's reason.
   */
  onNoAnswer(unit: number, now: number, wasProbe: boolean, what = 'timeouts', answered = false): HealthTransition | undefined {
    const health = this.get(unit);
    health.consecutiveTimeouts = answered ? 0 : health.consecutiveTimeouts + 1;
    health.lastFailure = what;
    if (health.cooldownUntil !== 0) {
      // A late timeout of a request admitted before the cool-down started changes nothing.
      if (!wasProbe) return undefined;
      health.probing = false;
      // While no unit of the bus answers (a peer or line that is gone), the probes do not back off:
      // they cost no neighbour anything, and the bus is back within one period once the peer is.
      if (this.lastBusAnswerAt >= health.cooldownSince) health.level += 1;
      const delayMs = this.delayFor(health.level);
      health.cooldownUntil = now + delayMs;
      return { kind: 'cooldown-extended', delayMs, level: health.level };
    }
    return this.failure(health, now);
  }

  /** The reply of a timed-out request came after all: the unit is alive but too slow, a failure too. */
  onLate(unit: number, now: number, what = 'late replies'): HealthTransition | undefined {
    const health = this.get(unit);
    if (health.cooldownUntil !== 0) return undefined;
    health.lastFailure = what;
    return this.failure(health, now);
  }

  private failure(health: UnitHealth, now: number): HealthTransition | undefined {
    health.failures += 1;
    if (health.failures < Math.max(1, this.config.afterTimeouts)) return undefined;
    health.level = 0;
    health.cooldownSince = now;
    const delayMs = this.delayFor(0);
    health.cooldownUntil = now + delayMs;
    return { kind: 'cooldown-started', delayMs, timeouts: health.consecutiveTimeouts, failures: health.failures, lastFailure: health.lastFailure };
  }

  /**
   * A unit came back from a cool-down. Units that began cooling down since the bus last answered
   * (`silentSince`) went silent with the whole bus (a peer or gateway that stopped answering): the
   * bus answers again, so they are probed at their next request instead of waiting out their period.
   */
  private busBack(silentSince: number, now: number): void {
    for (const health of this.units.values()) {
      if (health.cooldownUntil > now && health.cooldownSince >= silentSince) health.cooldownUntil = now;
    }
  }

  /** The request ended without telling anything about the unit (port closed, garbled frame). */
  onInconclusive(unit: number, wasProbe: boolean): void {
    const health = this.units.get(unit);
    if (health && wasProbe) health.probing = false;
  }

  private delayFor(level: number): number {
    return Math.min(this.config.maxMs, this.config.initialMs * 2 ** Math.min(level, 30));
  }

  view(unit: number): UnitStateView {
    const health = this.units.get(unit);
    if (!health || health.cooldownUntil === 0) {
      return { unit, state: 'ok', consecutiveTimeouts: health?.consecutiveTimeouts ?? 0, cooldownLevel: 0 };
    }
    return {
      unit,
      state: 'cooling-down',
      consecutiveTimeouts: health.consecutiveTimeouts,
      nextProbeAt: health.cooldownUntil,
      cooldownLevel: health.level,
    };
  }

  /** What the unit's last failure was, while it is cooling down. */
  lastFailure(unit: number): string | undefined {
    const health = this.units.get(unit);
    return health && health.cooldownUntil !== 0 ? health.lastFailure : undefined;
  }

  /** The units cooling down now, by unit id (at most the bus's units: cheap enough for every status). */
  coolingDown(now: number): CoolingUnitView[] {
    const views: CoolingUnitView[] = [];
    for (const [unit, health] of this.units) {
      if (health.cooldownUntil === 0) continue;
      views.push({ unit, nextProbeInMs: Math.max(0, health.cooldownUntil - now), cooldownLevel: health.level, lastFailure: health.lastFailure });
    }
    return views.sort((a, b) => a.unit - b.unit);
  }

  coolingDownCount(): number {
    let count = 0;
    for (const health of this.units.values()) if (health.cooldownUntil !== 0) count += 1;
    return count;
  }
}
