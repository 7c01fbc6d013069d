// The silence a line keeps between the end of one transaction and the next request
// (interFrameDelayMs; none on Modbus TCP): when the line is free again, and the one timer that
// starts the bus's queue then.
import type { Clock, Timers } from '../../core/time.js';

export class LineGap {
  private freeAt = 0;
  private cancelTimer: (() => void) | undefined;

  constructor(private readonly delayMs: number, private readonly clock: Clock, private readonly timers: Timers, private readonly onFree: () => void) {}

  /** The queue waits for the gap's timer. */
  get waiting(): boolean {
    return this.cancelTimer !== undefined;
  }

  /** True while the line is still in its gap; the queue is started again when it ends. */
  holds(): boolean {
    const wait = this.freeAt - this.clock.now();
    if (this.delayMs <= 0 || wait <= 0) return false;
    this.cancelTimer = this.timers.setTimer(() => {
      this.cancelTimer = undefined;
      this.onFree();
    }, wait);
    return true;
  }

  /** The port opened or a transaction ended (`silenceKept`: the transport already listened through it). */
  startAt(now: number, silenceKept = false): void {
    this.freeAt = now + (silenceKept ? 0 : this.delayMs);
  }

  cancel(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
  }
}
