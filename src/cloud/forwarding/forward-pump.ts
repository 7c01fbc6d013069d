// The one pump from an outbox to a link, for both packings (a device's own reports one per
// message, forwarder.ts; a gateway's sub-devices batched, gateway-forwarder.ts): a window of
// publishes awaiting PUBACK, acks by prefix only (deferred into few outbox transactions), paced,
// and on link down or up everything not yet acked sent again from the outbox (at least once, in
// order). What a message holds and which records it acks is the packing's.
import type { Logger } from '../../core/logger.js';
import { sleep, type Time } from '../../core/time.js';
import type { LinkEvent } from '../mqtt/link.js';
import type { OutboxRecord } from '../outbox/outbox.js';
import type { Pacer } from './pacer.js';
import { PublishWindow } from './publish-window.js';
import { WakeSignal } from './wake-signal.js';

export interface ForwarderOutbox {
  peek(device: string, limit: number, afterSeq?: number): OutboxRecord[];
  ack(device: string, upToSeq: number): number;
}

export interface ForwarderLink {
  readonly isUp: boolean;
  publish(topic: string, payload: Buffer): Promise<void>;
  onEvent(listener: (event: LinkEvent) => void): () => void;
}

/** A message ready to go and what its PUBACK acknowledges. */
export interface PackedMessage<T> {
  topic: string;
  payload: Buffer;
  acks: T;
}

/** How records become messages: the part the direct and the gateway forwarder do differently. */
export interface Packing<T, C> {
  /**
   * What would go next, or undefined when nothing waits: never undefined while a commit notified
   * before the call is unread (it reads the outbox afresh for it).
   */
  peek(): C | undefined;
  /** How long to wait, once per pump run, for more before sending `candidate` (0: at once). */
  lingerMs(candidate: C): number;
  /** Takes what `peek` gave out of the packing's queues, as the message to publish. */
  take(candidate: C): PackedMessage<T>;
  /** The acknowledged prefix grew by these messages: remember what to ack. */
  acknowledged(acks: T[]): void;
  /** Acks the outbox for what was acknowledged (deferred by the pump; before any resend). */
  flushAcks(): void;
  /** Everything peeked and in flight is forgotten: the next peek starts at the outbox head. */
  reset(): void;
}

export interface ForwardPumpOptions {
  link: ForwarderLink;
  log: Logger;
  /** Messages awaiting PUBACK at once. */
  window: number;
  pacer: Pacer;
  /** Acknowledged records are deleted in one transaction at most this long after their PUBACK. */
  ackDelayMs: number;
  time: Time;
  /** The one line logged when the outbox fails (then once more only after it worked again). */
  failure: { message: string; fields: Record<string, unknown> };
}

export class ForwardPump<T, C> {
  private readonly flights = new PublishWindow<T>({ acked: (acks) => this.acked(acks), failed: () => this.restart() });
  private readonly wakeSignal = new WakeSignal();
  private pumping = false;
  private again = false;
  private stopped = true;
  /** Quiescing for a replacement: acks still count, nothing new is sent. */
  private holding = false;
  private failing = false;
  private unsubscribe: (() => void) | undefined;
  private ackScheduled = false;
  /** Messages published, messages acknowledged, waits for the pacer. */
  readonly counters = { published: 0, acked: 0, paced: 0 };

  constructor(private readonly packing: Packing<T, C>, private readonly options: ForwardPumpOptions) {}

  get inFlight(): number {
    return this.flights.size;
  }

  /** What each message awaiting PUBACK acknowledges, oldest first. */
  inFlightAcks(): T[] {
    return this.flights.items();
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = this.options.link.onEvent((event) => {
      if (event.type === 'up' || event.type === 'down') this.restart();
      if (event.type === 'up') this.notify();
    });
    this.notify();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.restart();
  }

  /**
   * Sends nothing new and waits up to `timeoutMs` for what is in flight to be acknowledged, acks
   * it, and says whether all was.
   */
  async quiesce(timeoutMs: number): Promise<boolean> {
    this.holding = true;
    const clock = this.options.time;
    const until = clock.now() + timeoutMs;
    while (this.flights.size > 0 && this.options.link.isUp && clock.now() < until) await sleep(clock, 10);
    this.flushAck();
    return this.flights.size === 0;
  }

  /** New records were committed (or the link came up): send what can be sent. */
  notify(): void {
    if (this.stopped || !this.options.link.isUp) return;
    if (this.pumping) {
      this.again = true;
      this.wakeSignal.fire();
      return;
    }
    void this.pump();
  }

  /** Forget what is in flight; the next pump starts again at the outbox head (not yet acked). */
  private restart(): void {
    this.flushAck();
    this.flights.reset();
    this.packing.reset();
    this.wakeSignal.fire();
  }

  private async pump(): Promise<void> {
    const clock = this.options.time;
    this.pumping = true;
    // At most once per pump run: a backlog replay keeps the pump running and never waits.
    let lingered = false;
    try {
      while (!this.stopped && !this.holding && this.options.link.isUp) {
        if (this.flights.size >= this.options.window) {
          await this.wakeSignal.wait();
          continue;
        }
        // A commit notified from here on wakes the pump again; one notified before is seen by this peek.
        this.again = false;
        const candidate = this.packing.peek();
        if (candidate === undefined) {
          if (this.again) continue;
          break;
        }
        // Synchronous while a token is there: awaiting per message would cost a turn per publish.
        const delay = this.options.pacer.delayFor(clock.now());
        if (delay > 0) {
          this.counters.paced += 1;
          await sleep(clock, delay);
          continue;
        }
        const linger = lingered ? 0 : this.packing.lingerMs(candidate);
        lingered = true;
        if (linger > 0) {
          await sleep(clock, linger);
          continue;
        }
        const message = this.packing.take(candidate);
        this.counters.published += 1;
        this.flights.track(this.options.link.publish(message.topic, message.payload), message.acks);
      }
      this.failing = false;
    } catch (err) {
      // Outbox trouble (I/O error): try again shortly rather than stopping forwarding for good.
      if (!this.failing) this.options.log.error({ ...this.options.failure.fields, err }, this.options.failure.message);
      this.failing = true;
      clock.setTimer(() => this.notify(), 1000, { unref: true });
    } finally {
      this.pumping = false;
    }
    if (this.again && !this.stopped && this.options.link.isUp) this.notify();
  }

  private acked(acks: T[]): void {
    this.counters.acked += acks.length;
    // PUBACKs arrive one by one; deleting at most every ackDelayMs instead of once per PUBACK
    // turns hundreds of SQLite transactions per second into a few. A crash in between only means
    // a few more duplicates (at least once); a link drop or stop flushes first.
    this.packing.acknowledged(acks);
    if (!this.ackScheduled) {
      this.ackScheduled = true;
      this.options.time.setTimer(() => this.flushAck(), this.options.ackDelayMs, { unref: true });
    }
    this.wakeSignal.fire();
    if (!this.pumping) this.notify();
  }

  private flushAck(): void {
    this.ackScheduled = false;
    this.packing.flushAcks();
  }
}
