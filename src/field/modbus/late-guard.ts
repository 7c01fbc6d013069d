// Late replies on RTU framing (pure: time passed in). RTU has no transaction id, so a reply that
// comes after its timeout would pass for the answer to the next request of the same shape (unit,
// function and reply length). After a timeout the guard therefore holds back, for `guardMs`, only
// what the late reply could be taken for, and the price follows the evidence:
// - a unit never seen answering late (a lost frame, most likely) keeps its schedule: requests whose
//   reply has another shape go at once (the line port tells the late frame from theirs), and a read
//   of the held shape goes as shorter reads (halves when they can) whose replies have other lengths;
// - a unit seen answering late is not asked anything until its late reply came or its guard ran
//   out, and its guard learns: twice its slowest answer time, up to LEARNED_GUARD_CAP times the
//   configured guard. That lesson decays (`LateDecay`): after enough answers in time, or a time
//   without a late reply, the unit is treated as never seen late again.
// The repeat of a timed-out read (same shape and address) is not held: whichever copy's answer
// comes is a true reading, at most a timeout old. A guard that ran out without its late reply ends only with evidence: a
// request of its shape at another address waits (or goes split) until the identical request was
// answered after the guard (a unit answers in order: the earlier reply can no longer come), at
// most one guard length more.
// Late replies are counted per unit, with the slowest answer time seen, so the integrator can pick
// a timeout that fits.
import type { BusConfig } from '../../core/config/site-types.js';
import { replyFrameLength } from '../../core/modbus/late-frames.js';
import type { ReplyShape } from './transport-types.js';

/** Default late-reply guard on RTU framing, in request timeouts: a reply up to 10x late cannot pass for another. */
export const LATE_GUARD_TIMEOUTS = 10;

/** The configured guard after a timeout of `timeoutMs` (before any learning). */
export function configuredGuardMs(config: BusConfig, timeoutMs: number): number {
  return config.lateReplyGuardMs ?? LATE_GUARD_TIMEOUTS * timeoutMs;
}

export interface LateUnitView {
  unit: number;
  /** Replies that came after their request had timed out. */
  lateReplies: number;
  /** The slowest of them: ms from request to reply. */
  slowestAnswerMs: number;
  /** Epoch ms until which a late reply of the unit is still watched for (requests it could pass for wait). */
  guardedUntil?: number;
}

/** A learned guard is at most this many times the configured one. */
export const LEARNED_GUARD_CAP = 6;

export type LateGuardAdmission =
  | { kind: 'go' }
  /** Only as reads of `pieceCount` registers or bits at most (their replies cannot be taken for a late one). */
  | { kind: 'split'; pieceCount: number }
  /** Not now: `lateSeen` when the unit has answered late before (the whole unit waits). */
  | { kind: 'wait'; retryInMs: number; lateSeen: boolean };

/** What a request asks, as the guard needs it; reads may be split into shorter ones. */
export interface GuardedRequest extends ReplyShape {
  splittable: boolean;
  /** The repeat of a read that timed out (timeout-repeats.ts): the identical request goes through its guard. */
  repeat?: boolean;
}

interface Awaited {
  /** undefined: the transport did not say what timed out (the whole unit waits). */
  shape?: ReplyShape;
  until: number;
  /** Past `until`, requests of its shape at another address still clash until then (or the identical request answered). */
  settleBy: number;
}

interface LateUnit {
  awaited: Awaited[];
  lateReplies: number;
  slowestAnswerMs: number;
  /** Treated as answering late now (decays): the whole unit waits while a guard runs, the guard learns. */
  lateSeen: boolean;
  /** The slowest late answer since it was last treated as answering in time (what the guard learns from). */
  learnedSlowestMs: number;
  lastLateAt: number;
  answersSinceLate: number;
}

/** When "seen answering late" is forgotten: after this many answers in time, or this long without a late reply. */
export interface LateDecay {
  afterAnswers: number;
  afterMs: number;
}

export const DEFAULT_LATE_DECAY: LateDecay = { afterAnswers: 20, afterMs: 120_000 };

function sameShape(a: ReplyShape, b: ReplyShape): boolean {
  return a.functionCode === b.functionCode && replyFrameLength(a.functionCode, a.quantity) === replyFrameLength(b.functionCode, b.quantity);
}

/** The same request (shape and address): its late reply would be a true reading of it. */
function identical(a: ReplyShape, b: ReplyShape): boolean {
  return a.address !== undefined && a.address === b.address && a.functionCode === b.functionCode && a.quantity === b.quantity;
}

export class LateReplyGuard {
  private readonly units = new Map<number, LateUnit>();

  constructor(private readonly decay: LateDecay = DEFAULT_LATE_DECAY) {}

  private get(unit: number): LateUnit {
    let state = this.units.get(unit);
    if (!state) {
      state = { awaited: [], lateReplies: 0, slowestAnswerMs: 0, lateSeen: false, learnedSlowestMs: 0, lastLateAt: 0, answersSinceLate: 0 };
      this.units.set(unit, state);
    }
    return state;
  }

  /**
   * A request to `unit` (`shape`: what was on the wire) timed out at `now`: its reply may still be
   * on its way, so what it could be taken for is held back for `guardMs` (longer for a unit seen
   * answering later than that) unless the late reply comes first. Returns the guard applied.
   */
  onTimeout(unit: number, shape: ReplyShape | undefined, now: number, guardMs: number): number {
    const state = this.get(unit);
    this.decayed(state, now);
    const learned = state.lateSeen ? Math.min(2 * state.learnedSlowestMs, LEARNED_GUARD_CAP * guardMs) : 0;
    const applied = Math.max(guardMs, learned);
    // Settled guards go here too, not only when the unit is next admitted (it may never be).
    state.awaited = state.awaited.filter((a) => a.settleBy > now && !(a.shape && shape && sameShape(a.shape, shape)));
    state.awaited.push({ ...(shape ? { shape } : {}), until: now + applied, settleBy: now + (shape ? 2 * applied : applied) });
    return applied;
  }

  /**
   * The late reply of `unit` (to a request of `shape`; undefined: of every shape) was seen: nothing of that
   * request is due any more. Returns true for the unit's first late reply (the one worth a warning).
   */
  onLateReply(unit: number, shape: ReplyShape | undefined, answeredAfterMs: number, now: number): boolean {
    const state = this.get(unit);
    const index = shape ? state.awaited.findIndex((a) => !a.shape || sameShape(a.shape, shape)) : -1;
    if (index >= 0) state.awaited.splice(index, 1);
    else if (!shape) state.awaited = [];
    state.lateReplies += 1;
    state.slowestAnswerMs = Math.max(state.slowestAnswerMs, Math.round(answeredAfterMs));
    const first = !state.lateSeen;
    state.lateSeen = true;
    state.learnedSlowestMs = Math.max(state.learnedSlowestMs, Math.round(answeredAfterMs));
    state.lastLateAt = now;
    state.answersSinceLate = 0;
    return first;
  }

  /**
   * `unit` answered a request (`shape`: what it asked, undefined when read as pieces) in time.
   * Settles a guard that ran out if this was its identical request; returns true when the unit
   * stops being treated as answering late (the lesson decayed).
   */
  onAnswered(unit: number, shape: ReplyShape | undefined, now: number): boolean {
    const state = this.units.get(unit);
    if (!state) return false;
    if (shape) state.awaited = state.awaited.filter((a) => !(a.until <= now && a.shape && identical(a.shape, shape)));
    state.answersSinceLate += 1;
    return this.decayed(state, now);
  }

  private decayed(state: LateUnit, now: number): boolean {
    if (!state.lateSeen) return false;
    if (state.answersSinceLate < this.decay.afterAnswers && now - state.lastLateAt < this.decay.afterMs) return false;
    state.lateSeen = false;
    state.learnedSlowestMs = 0;
    return true;
  }

  /** Whether a guard running now holds back every request to `unit` (seen answering late, or a timeout of no known shape). */
  holdsWholeUnit(unit: number, now: number): boolean {
    const state = this.units.get(unit);
    const running = state?.awaited.filter((a) => a.until > now) ?? [];
    return running.length > 0 && ((state?.lateSeen ?? false) || running.some((a) => !a.shape));
  }

  /** Whether `request` to `unit` may go now, as it is, split, or not yet. */
  admit(unit: number, request: GuardedRequest | undefined, now: number): LateGuardAdmission {
    const state = this.units.get(unit);
    if (!state) return { kind: 'go' };
    state.awaited = state.awaited.filter((a) => a.settleBy > now);
    if (state.awaited.length === 0) return { kind: 'go' };
    const running = state.awaited.filter((a) => a.until > now);
    const lateSeen = state.lateSeen;
    if (running.length > 0 && (lateSeen || !request || running.some((a) => !a.shape))) {
      return { kind: 'wait', retryInMs: Math.max(...running.map((a) => a.until)) - now, lateSeen };
    }
    if (!request) return { kind: 'go' };
    const held = state.awaited.flatMap((a) => (a.shape ? [a.shape] : []));
    const clashes = (quantity: number) => held.some((shape) => sameShape(shape, { functionCode: request.functionCode, quantity }));
    // The identical request passes as the repeat right after its timeout (the late answer is at
    // most a timeout old) and once the guard ran out (the evidence that settles it); not meanwhile.
    const passes = (a: Awaited) => a.shape !== undefined && identical(a.shape, request) && (request.repeat === true || a.until <= now);
    const clash = state.awaited.find((a) => a.shape && sameShape(a.shape, request) && !passes(a));
    if (!clash) return { kind: 'go' };
    if (request.splittable) {
      // Halves first (a device silent on long reads answers them), else the longest pieces whose
      // replies, the last (shorter) one included, clash with nothing held.
      const half = Math.ceil(request.quantity / 2);
      const sizes = [half, ...Array.from({ length: request.quantity - 1 }, (_, i) => request.quantity - 1 - i).filter((n) => n !== half)];
      for (const piece of sizes) {
        const rest = request.quantity % piece;
        if (piece >= 1 && !clashes(piece) && (rest === 0 || !clashes(rest))) return { kind: 'split', pieceCount: piece };
      }
    }
    return { kind: 'wait', retryInMs: (clash.until > now ? clash.until : clash.settleBy) - now, lateSeen };
  }

  /** Units that answered late at least once, or are guarded now. */
  list(now: number): LateUnitView[] {
    return [...this.units.entries()]
      .map(([unit, s]) => ({ unit, s, until: Math.max(0, ...s.awaited.map((a) => a.until)) }))
      .filter(({ s, until }) => s.lateReplies > 0 || until > now)
      .sort((a, b) => a.unit - b.unit)
      .map(({ unit, s, until }) => ({
        unit, lateReplies: s.lateReplies, slowestAnswerMs: s.slowestAnswerMs,
        ...(until > now ? { guardedUntil: until } : {}),
      }));
  }
}
