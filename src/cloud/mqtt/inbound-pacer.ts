// Inbound MQTT messages arrive in bursts: mqtt.js parses a whole TCP chunk and hands its packets
// over one after another in the same turn of the event loop, so 10,000 queued commands would
// keep the loop (and the pollers' timers and bus replies) waiting for hundreds of ms. The pacer
// lets a burst run for at most `sliceMs` per turn of the event loop, then holds the next message
// until the loop has turned (mqtt.js waits for it, and so do the PUBACKs, so the broker paces
// what it sends). What the turn writes (PUBACKs, command replies) is held back and leaves in one
// write when the turn ends, instead of one system call per packet. Messages keep their order;
// none is dropped.

/** Default time a burst of inbound messages may hold the event loop per turn. */
export const DEFAULT_INBOUND_SLICE_MS = 2;

export interface PacerHooks {
  /** Called when a turn with inbound messages starts: hold the connection's writes (cork). */
  hold(): void;
  /** Called when that turn ends: let them go (uncork). */
  release(): void;
}

export class InboundPacer {
  private inTurn = false;
  private sliceStart = 0;
  private waiting: (() => void) | undefined;
  /** Times a message waited for the event loop to turn. */
  yields = 0;

  constructor(
    private readonly hooks: PacerHooks,
    private readonly sliceMs = DEFAULT_INBOUND_SLICE_MS,
    private readonly now: () => number = () => performance.now(),
    private readonly defer: (next: () => void) => void = (next) => void setImmediate(next),
  ) {}

  /** Called once a message has been handled; `next` lets the client go on with the following one. */
  handled(next: () => void): void {
    if (!this.inTurn) {
      this.inTurn = true;
      this.sliceStart = this.now();
      this.hooks.hold();
      this.defer(() => this.endTurn());
    }
    if (this.now() - this.sliceStart < this.sliceMs) {
      next();
      return;
    }
    this.yields += 1;
    this.waiting = next;
  }

  private endTurn(): void {
    this.inTurn = false;
    this.hooks.release();
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }
}
