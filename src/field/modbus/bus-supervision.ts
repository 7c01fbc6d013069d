// What a bus watches about itself besides single requests (pure, time passed in): whether the
// line still yields good replies at all, and a bounded debug log of discarded replies.

/** Default of the bus key `reopenAfterSilenceMs`. */
export const DEFAULT_REOPEN_AFTER_SILENCE_MS = 30_000;

export type SilenceVerdict = 'ok' | 'reopen-first' | 'reopen-again';

/**
 * A port that is open but from which no unit has given a good reply (a value or a Modbus
 * exception) for `limitMs`, while requests kept failing, is reopened: whatever state the
 * connection or the adapter is in, a fresh one is the cure a technician would try first.
 */
export class SilenceWatch {
  goodReplies = 0;
  reopens = 0;
  private lastGoodAt = 0;
  private failuresSinceGood = 0;
  private inEpisode = false;

  constructor(private readonly limitMs: number) {}

  /** The port (re)opened: the silence clock starts afresh. */
  onOpen(now: number): void {
    this.lastGoodAt = now;
    this.failuresSinceGood = 0;
  }

  /** A reply matched its request. Returns true when it ends a silence episode (log it once). */
  onGood(now: number): boolean {
    this.goodReplies += 1;
    this.lastGoodAt = now;
    this.failuresSinceGood = 0;
    const ended = this.inEpisode;
    this.inEpisode = false;
    return ended;
  }

  /** A request failed on the wire (timeout, discarded or malformed reply). */
  onFailure(now: number): SilenceVerdict {
    this.failuresSinceGood += 1;
    if (now - this.lastGoodAt < this.limitMs) return 'ok';
    this.reopens += 1;
    const first = !this.inEpisode;
    this.inEpisode = true;
    return first ? 'reopen-first' : 'reopen-again';
  }

  /** Requests have failed since the last good reply: the bus is expected to make progress. */
  get failing(): boolean {
    return this.failuresSinceGood > 0;
  }
}

/** At most `perWindow` debug lines per window for discarded replies; the counter carries the rest. */
export class LogBudget {
  private windowStart = -Infinity;
  private used = 0;

  constructor(private readonly perWindow = 10, private readonly windowMs = 60_000) {}

  take(now: number): boolean {
    if (now - this.windowStart >= this.windowMs) {
      this.windowStart = now;
      this.used = 0;
    }
    if (this.used >= this.perWindow) return false;
    this.used += 1;
    return true;
  }
}
