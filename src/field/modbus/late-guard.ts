// Late replies on RTU framing (pure: time passed in). RTU has no transaction id, so a reply that
// comes after its timeout would pass for the answer to the next request of the same shape (unit,
// function and reply length). After a timeout the guard therefore holds back, for `guardMs`, only
// what the late reply could be taken for, and the price follows the evidence:
// - a unit never seen answering late (a lost frame, most likely) keeps its schedule: requests whose
//   reply has another shape go at once (the line port tells the late frame from theirs), and a read
//   of the held shape goes as shorter reads (halves when they can) whose replies have other lengths;
// - a unit seen answering late is not asked anything until its late reply came or its guard ran
//   out, and its guard learns: twice its slowest answer time, up to LEARNED_GUARD_CAP times the
//   configured guard.
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
}

interface Awaited {
  /** undefined: the transport did not say what timed out (the whole unit waits). */
  shape?: ReplyShape;
  until: number;
}

interface LateUnit {
  awaited: Awaited[];
  lateReplies: number;
  slowestAnswerMs: number;
}

function sameShape(a: ReplyShape, b: ReplyShape): boolean {
  return a.functionCode === b.functionCode && replyFrameLength(a.functionCode, a.quantity) === replyFrameLength(b.functionCode, b.quantity);
}

export class LateReplyGuard {
  private readonly units = new Map<number, LateUnit>();

  private get(unit: number): LateUnit {
    let state = this.units.get(unit);
    if (!state) {
      state = { awaited: [], lateReplies: 0, slowestAnswerMs: 0 };
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
    const learned = Math.min(2 * state.slowestAnswerMs, LEARNED_GUARD_CAP * guardMs);
    const applied = Math.max(guardMs, learned);
    // Expired guards go here too, not only when the unit is next admitted (it may never be).
    state.awaited = state.awaited.filter((a) => a.until > now && !(a.shape && shape && sameShape(a.shape, shape)));
    state.awaited.push({ ...(shape ? { shape } : {}), until: now + applied });
    return applied;
  }

  /**
   * The late reply of `unit` (to a request of `shape`; undefined: of every shape) was seen: nothing of that
   * request is due any more. Returns true for the unit's first late reply (the one worth a warning).
   */
  onLateReply(unit: number, shape: ReplyShape | undefined, answeredAfterMs: number): boolean {
    const state = this.get(unit);
    const index = shape ? state.awaited.findIndex((a) => !a.shape || sameShape(a.shape, shape)) : -1;
    if (index >= 0) state.awaited.splice(index, 1);
    else if (!shape) state.awaited = [];
    state.lateReplies += 1;
    state.slowestAnswerMs = Math.max(state.slowestAnswerMs, Math.round(answeredAfterMs));
    return state.lateReplies === 1;
  }

  /** Whether a guard running now holds back every request to `unit` (seen answering late, or a timeout of no known shape). */
  holdsWholeUnit(unit: number, now: number): boolean {
    const state = this.units.get(unit);
    const running = state?.awaited.filter((a) => a.until > now) ?? [];
    return running.length > 0 && ((state?.lateReplies ?? 0) > 0 || running.some((a) => !a.shape));
  }

  /** Whether `request` to `unit` may go now, as it is, split, or not yet. */
  admit(unit: number, request: GuardedRequest | undefined, now: number): LateGuardAdmission {
    const state = this.units.get(unit);
    if (!state) return { kind: 'go' };
    state.awaited = state.awaited.filter((a) => a.until > now);
    if (state.awaited.length === 0) return { kind: 'go' };
    const lastUntil = Math.max(...state.awaited.map((a) => a.until));
    const lateSeen = state.lateReplies > 0;
    if (lateSeen || !request || state.awaited.some((a) => !a.shape)) return { kind: 'wait', retryInMs: lastUntil - now, lateSeen };
    const held = state.awaited.map((a) => a.shape as ReplyShape);
    const clashes = (quantity: number) => held.some((shape) => sameShape(shape, { functionCode: request.functionCode, quantity }));
    const clash = state.awaited.find((a) => sameShape(a.shape as ReplyShape, request));
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
    return { kind: 'wait', retryInMs: clash.until - now, lateSeen };
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
