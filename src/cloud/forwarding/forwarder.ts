// Drains one device's outbox into its link: in order, a window of publishes in flight, ack only
// after PUBACK, paced so a replayed backlog does not flood the cloud. On link down everything
// not yet acked is sent again after the next up (at least once, in order).
import type { Logger } from '../../core/logger.js';
import type { LinkEvent } from '../mqtt/link.js';
import type { OutboxRecord } from '../outbox/outbox.js';
import type { Pacer } from './pacer.js';
import { TokenBucket } from './pacer.js';
import { TOPIC } from '../mqtt/topics.js';
import { sleep, systemTime, type Time } from '../../core/time.js';
import { PublishWindow } from './publish-window.js';
import { WakeSignal } from './wake-signal.js';

export { TokenBucket, type Pacer } from './pacer.js';

export interface ForwarderOutbox {
  peek(device: string, limit: number, afterSeq?: number): OutboxRecord[];
  ack(device: string, upToSeq: number): number;
}

export interface ForwarderLink {
  readonly isUp: boolean;
  publish(topic: string, payload: Buffer): Promise<void>;
  onEvent(listener: (event: LinkEvent) => void): () => void;
}

export interface ForwarderOptions {
  device: string;
  outbox: ForwarderOutbox;
  link: ForwarderLink;
  log: Logger;
  /** Publishes awaiting PUBACK at once. */
  window?: number;
  /** Publish rate cap; defaults to a per-device bucket of 500/s with bursts of `window`. */
  pacer?: Pacer;
  /** Records read from the outbox per query (default `window`): one SELECT per batch, not per publish. */
  readAhead?: number;
  /** Acknowledged records are deleted in one transaction at most this long after their PUBACK. */
  ackDelayMs?: number;
  topic?: string;
  time?: Time;
}

export interface ForwarderStats {
  published: number;
  acked: number;
  inFlight: number;
  paced: number;
}

export class Forwarder {
  private readonly window: number;
  private readonly pacer: Pacer;
  private readonly topic: string;
  private readonly clock: Time;
  private readonly flights = new PublishWindow<number>({ acked: (seqs) => this.acked(seqs), failed: () => this.restart() });
  /** Records peeked but not yet sent, from `next` on; refilled from the outbox when used up. */
  private readAhead: OutboxRecord[] = [];
  private next = 0;
  private lastPeekedSeq = 0;
  private readonly readAheadSize: number;
  private readonly ackDelayMs: number;
  private pumping = false;
  private again = false;
  private stopped = true;
  /** Quiescing for a replacement: acks still count, nothing new is sent. */
  private holding = false;
  private readonly wakeSignal = new WakeSignal();
  private unsubscribe: (() => void) | undefined;
  private failing = false;
  private readonly counters = { published: 0, acked: 0, paced: 0 };
  private ackUpTo: number | undefined;
  private ackScheduled = false;

  constructor(private readonly options: ForwarderOptions) {
    this.window = Math.max(1, options.window ?? 100);
    this.readAheadSize = Math.max(1, options.readAhead ?? this.window);
    this.ackDelayMs = Math.max(0, options.ackDelayMs ?? 10);
    this.pacer = options.pacer ?? new TokenBucket(500, this.window);
    this.topic = options.topic ?? TOPIC.attributes;
    this.clock = options.time ?? systemTime;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = this.options.link.onEvent((event) => this.onLinkEvent(event));
    this.notify();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.restart();
  }

  /**
   * Before a replacement takes over the device (a reload): sends nothing new and waits up to
   * `timeoutMs` for what is in flight to be acknowledged, acks it, and says whether all was. The
   * replacement then starts after those records, so none is sent twice.
   */
  async quiesce(timeoutMs: number): Promise<boolean> {
    this.holding = true;
    const until = this.clock.now() + timeoutMs;
    while (this.flights.size > 0 && this.options.link.isUp && this.clock.now() < until) await sleep(this.clock, 10);
    this.flushAck();
    return this.flights.size === 0;
  }

  /** New records were committed for this device (or the link came up): send what can be sent. */
  notify(): void {
    if (this.stopped || !this.options.link.isUp) return;
    if (this.pumping) {
      this.again = true;
      this.wakeSignal.fire();
      return;
    }
    void this.pump();
  }

  stats(): ForwarderStats {
    return { ...this.counters, inFlight: this.flights.size };
  }

  private onLinkEvent(event: LinkEvent): void {
    if (event.type === 'up') {
      this.restart();
      this.notify();
    } else if (event.type === 'down') {
      this.restart();
    }
  }

  /** Forget what is in flight; the next pump starts again at the outbox head (not yet acked). */
  private restart(): void {
    this.flushAck();
    this.flights.reset();
    this.readAhead = [];
    this.next = 0;
    this.lastPeekedSeq = 0;
    this.wakeSignal.fire();
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (!this.stopped && !this.holding && this.options.link.isUp) {
        if (this.flights.size >= this.window) {
          await this.wakeSignal.wait();
          continue;
        }
        const record = this.nextRecord();
        if (record === undefined) {
          if (this.again) continue;
          break;
        }
        // Synchronous while a token is there: awaiting per record would cost a turn per publish.
        const delay = this.pacer.delayFor(this.clock.now());
        if (delay > 0) {
          this.counters.paced += 1;
          await sleep(this.clock, delay);
          continue;
        }
        this.next += 1;
        this.send(record);
      }
      this.failing = false;
    } catch (err) {
      // Outbox trouble (I/O error): try again shortly rather than stopping this device for good.
      if (!this.failing) this.options.log.error({ device: this.options.device, err }, 'forwarding failed');
      this.failing = true;
      this.clock.setTimer(() => this.notify(), 1000, { unref: true });
    } finally {
      this.pumping = false;
    }
    if (this.again && !this.stopped && this.options.link.isUp) this.notify();
  }

  /** The oldest record not yet sent, read ahead in batches; undefined when the outbox has no more. */
  private nextRecord(): OutboxRecord | undefined {
    if (this.next >= this.readAhead.length) {
      this.again = false;
      this.readAhead = this.options.outbox.peek(this.options.device, this.readAheadSize, this.lastPeekedSeq);
      this.next = 0;
      if (this.readAhead.length === 0) return undefined;
      this.lastPeekedSeq = this.readAhead[this.readAhead.length - 1].seq;
    }
    return this.readAhead[this.next];
  }

  private send(record: OutboxRecord): void {
    this.counters.published += 1;
    this.flights.track(this.options.link.publish(this.topic, record.payload), record.seq);
  }

  /** The acknowledged prefix grew: ack the outbox up to its last record (deferred, see below). */
  private acked(seqs: number[]): void {
    this.counters.acked += seqs.length;
    // PUBACKs arrive one by one; deleting at most every ackDelayMs instead of once per PUBACK
    // turns hundreds of SQLite transactions per second into a few. A crash in between only means
    // a few more duplicates (at least once); a link drop or stop flushes first.
    this.ackUpTo = seqs[seqs.length - 1];
    if (!this.ackScheduled) {
      this.ackScheduled = true;
      this.clock.setTimer(() => this.flushAck(), this.ackDelayMs, { unref: true });
    }
    this.wakeSignal.fire();
    if (!this.pumping) this.notify();
  }

  /** Deletes what the broker acknowledged; also run before a resend so acked records are not resent. */
  private flushAck(): void {
    this.ackScheduled = false;
    const upTo = this.ackUpTo;
    this.ackUpTo = undefined;
    if (upTo === undefined) return;
    try {
      this.options.outbox.ack(this.options.device, upTo);
    } catch (err) {
      this.options.log.error({ device: this.options.device, err }, 'outbox ack failed');
    }
  }

}
