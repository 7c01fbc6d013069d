// Drains one device's outbox into its link: in order, one report per message, a window of
// publishes in flight, ack only after PUBACK, paced so a replayed backlog does not flood the cloud.
// On link down everything not yet acked is sent again after the next up (at least once, in
// order). The pump is forward-pump.ts's, shared with the gateway's batching forwarder.
import type { Logger } from '../../core/logger.js';
import type { OutboxRecord } from '../outbox/outbox.js';
import type { Pacer } from './pacer.js';
import { TokenBucket } from './pacer.js';
import { TOPIC } from '../mqtt/topics.js';
import { systemTime, type Time } from '../../core/time.js';
import { ForwardPump, type ForwarderLink, type ForwarderOutbox, type PackedMessage, type Packing } from './forward-pump.js';

export { TokenBucket, type Pacer } from './pacer.js';
export type { ForwarderLink, ForwarderOutbox } from './forward-pump.js';

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
  private readonly pump: ForwardPump<number, OutboxRecord>;

  constructor(options: ForwarderOptions) {
    const window = Math.max(1, options.window ?? 100);
    const packing = new DirectPacking(options, Math.max(1, options.readAhead ?? window));
    this.pump = new ForwardPump(packing, {
      link: options.link, log: options.log, window, pacer: options.pacer ?? new TokenBucket(500, window),
      ackDelayMs: Math.max(0, options.ackDelayMs ?? 10), time: options.time ?? systemTime,
      failure: { message: 'forwarding failed', fields: { device: options.device } },
    });
  }

  start(): void {
    this.pump.start();
  }

  stop(): void {
    this.pump.stop();
  }

  /**
   * Before a replacement takes over the device (a reload): sends nothing new and waits up to
   * `timeoutMs` for what is in flight to be acknowledged, acks it, and says whether all was. The
   * replacement then starts after those records, so none is sent twice.
   */
  quiesce(timeoutMs: number): Promise<boolean> {
    return this.pump.quiesce(timeoutMs);
  }

  /** New records were committed for this device (or the link came up): send what can be sent. */
  notify(): void {
    this.pump.notify();
  }

  stats(): ForwarderStats {
    return { ...this.pump.counters, inFlight: this.pump.inFlight };
  }
}

/** The direct packing: each record of the device its own message, acked by its seq. */
class DirectPacking implements Packing<number, OutboxRecord> {
  private readonly topic: string;
  /** Records peeked but not yet sent, from `next` on; refilled from the outbox when used up. */
  private readAhead: OutboxRecord[] = [];
  private next = 0;
  private lastPeekedSeq = 0;
  private ackUpTo: number | undefined;

  constructor(private readonly options: ForwarderOptions, private readonly readAheadSize: number) {
    this.topic = options.topic ?? TOPIC.attributes;
  }

  /** The oldest record not yet sent, read ahead in batches; undefined when the outbox has no more. */
  peek(): OutboxRecord | undefined {
    if (this.next >= this.readAhead.length) {
      this.readAhead = this.options.outbox.peek(this.options.device, this.readAheadSize, this.lastPeekedSeq);
      this.next = 0;
      if (this.readAhead.length === 0) return undefined;
      this.lastPeekedSeq = this.readAhead[this.readAhead.length - 1].seq;
    }
    return this.readAhead[this.next];
  }

  lingerMs(): number {
    return 0;
  }

  take(record: OutboxRecord): PackedMessage<number> {
    this.next += 1;
    return { topic: this.topic, payload: record.payload, acks: record.seq };
  }

  /** The acknowledged prefix grew: the outbox is acked up to its last record. */
  acknowledged(seqs: number[]): void {
    this.ackUpTo = seqs[seqs.length - 1];
  }

  /** Deletes what the broker acknowledged; also run before a resend so acked records are not resent. */
  flushAcks(): void {
    const upTo = this.ackUpTo;
    this.ackUpTo = undefined;
    if (upTo === undefined) return;
    try {
      this.options.outbox.ack(this.options.device, upTo);
    } catch (err) {
      this.options.log.error({ device: this.options.device, err }, 'outbox ack failed');
    }
  }

  reset(): void {
    this.readAhead = [];
    this.next = 0;
    this.lastPeekedSeq = 0;
  }
}
