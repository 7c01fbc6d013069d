// Late replies on RTU framing (pure: time passed in). RTU has no transaction id, so a reply that
// comes after its timeout would pass for the answer to the next request with the same shape. After
// a timeout the unit is therefore not asked again until its late reply has been seen (other
// units' exchanges go on meanwhile: a late frame then carries the wrong unit id and is recognised)
// or until its guard has passed without it. The guard learns: a unit seen answering later than
// its guard gets twice its slowest answer time, up to LEARNED_GUARD_CAP times the configured guard.
// Late replies are counted per unit, with the slowest answer time seen, so the integrator can pick
// a timeout that fits.

export interface LateUnitView {
  unit: number;
  /** Replies that came after their request had timed out. */
  lateReplies: number;
  /** The slowest of them: ms from request to reply. */
  slowestAnswerMs: number;
  /** Epoch ms until which the unit is not asked (guarding against a late reply still due). */
  guardedUntil?: number;
}

/** A learned guard is at most this many times the configured one. */
export const LEARNED_GUARD_CAP = 6;

export type LateGuardAdmission = { kind: 'go' } | { kind: 'wait'; retryInMs: number };

interface LateUnit {
  guardedUntil: number;
  lateReplies: number;
  slowestAnswerMs: number;
}

export class LateReplyGuard {
  private readonly units = new Map<number, LateUnit>();

  private get(unit: number): LateUnit {
    let state = this.units.get(unit);
    if (!state) {
      state = { guardedUntil: 0, lateReplies: 0, slowestAnswerMs: 0 };
      this.units.set(unit, state);
    }
    return state;
  }

  /**
   * A request to `unit` timed out at `now`: its reply may still be on its way, so the unit is left
   * alone for `guardMs` (longer for a unit seen answering later than that) unless the late reply
   * comes first. Returns the guard applied.
   */
  onTimeout(unit: number, now: number, guardMs: number): number {
    const state = this.get(unit);
    const learned = Math.min(2 * state.slowestAnswerMs, LEARNED_GUARD_CAP * guardMs);
    const applied = Math.max(guardMs, learned);
    state.guardedUntil = now + applied;
    return applied;
  }

  /**
   * The late reply of `unit` was seen: nothing of it is due any more, so it may be asked again.
   * Returns true for the unit's first late reply (the one worth a warning).
   */
  onLateReply(unit: number, answeredAfterMs: number): boolean {
    const state = this.get(unit);
    state.guardedUntil = 0;
    state.lateReplies += 1;
    state.slowestAnswerMs = Math.max(state.slowestAnswerMs, Math.round(answeredAfterMs));
    return state.lateReplies === 1;
  }

  admit(unit: number, now: number): LateGuardAdmission {
    const state = this.units.get(unit);
    if (!state || state.guardedUntil <= now) return { kind: 'go' };
    return { kind: 'wait', retryInMs: state.guardedUntil - now };
  }

  /** Units that answered late at least once, or are guarded now. */
  list(now: number): LateUnitView[] {
    return [...this.units.entries()]
      .filter(([, s]) => s.lateReplies > 0 || s.guardedUntil > now)
      .sort(([a], [b]) => a - b)
      .map(([unit, s]) => ({
        unit, lateReplies: s.lateReplies, slowestAnswerMs: s.slowestAnswerMs,
        ...(s.guardedUntil > now ? { guardedUntil: s.guardedUntil } : {}),
      }));
  }
}
