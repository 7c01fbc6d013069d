// Publish pacing for forwarders (pure: the caller passes the time in).

/** Decides when the next publish may go out (shareable between forwarders for a global cap). */
export interface Pacer {
  /** 0 to go now (and the slot is taken), else ms to wait before asking again. */
  delayFor(now: number): number;
}

/** Token bucket: `ratePerSecond` on average, bursts of up to `burst`. */
export class TokenBucket implements Pacer {
  private tokens: number;
  private last: number | undefined;

  constructor(private readonly ratePerSecond: number, private readonly burst: number) {
    this.tokens = burst;
  }

  delayFor(now: number): number {
    if (this.last !== undefined) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.ratePerSecond) / 1000);
    }
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil(((1 - this.tokens) * 1000) / this.ratePerSecond));
  }
}
