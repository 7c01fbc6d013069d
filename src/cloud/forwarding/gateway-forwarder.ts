// Drains the outbox of every sub-device into the identity's one link as batched
// `gateway/attributes` messages. Guarantees as for a device's own forwarder: each device's
// reports go in order (at most one per batch), a report is acked only after the PUBACK of the
// message that carried it and of every earlier message (so a device's acks never skip ahead),
// publishes are paced by the shared pacer, and on link down everything unacked is sent again
// after the next up.
import type { Logger } from '../../core/logger.js';
import type { ForwarderLink, ForwarderOutbox, Pacer } from './forwarder.js';
import { packBatch, type BatchCandidate } from './gateway-batch.js';
import { GATEWAY_TOPIC } from '../mqtt/gateway-topics.js';
import type { OutboxRecord } from '../outbox/outbox.js';
import { sleep, systemTime, type Time } from '../../core/time.js';
import { PublishWindow } from './publish-window.js';
import { WakeSignal } from './wake-signal.js';

export interface GatewayForwarderOptions {
  /** Sub-device name -> its address. */
  devices: ReadonlyMap<string, string>;
  outbox: ForwarderOutbox;
  link: ForwarderLink;
  log: Logger;
  pacer: Pacer;
  maxBatchBytes: number;
  /** Batches awaiting PUBACK at once. */
  window?: number;
  /** Records read per device per outbox query. */
  readAhead?: number;
  /**
   * Live reports arrive one device at a time (each device polls on its own schedule): a pump that
   * starts from idle waits this long once for more before sending a batch that is not full.
   * 0 = send at once (one message per report while nothing backs up).
   */
  lingerMs?: number;
  /** Each batch published, with the addresses it carries (the cloud answers batches in this order). */
  onBatch?(addresses: readonly string[]): void;
  /** Acks are written at most this long after their PUBACK (fewer outbox transactions). */
  ackDelayMs?: number;
  time?: Time;
}

interface DeviceQueue {
  address: string;
  /** Peeked, not yet sent, oldest first. */
  pending: OutboxRecord[];
  lastPeekedSeq: number;
  /** New records may be waiting in the outbox. */
  dirty: boolean;
}

/** What one batch message carried: each device's record seq. */
type BatchEntries = ReadonlyArray<{ device: string; seq: number }>;

export interface GatewayForwarderStats {
  /** Batch messages published and acknowledged. */
  published: number;
  acked: number;
  /** Device reports carried by acknowledged batches. */
  reportsAcked: number;
  inFlight: number;
  paced: number;
}

export class GatewayForwarder {
  private readonly queues = new Map<string, DeviceQueue>();
  private readonly order: string[];
  private cursor = 0;
  private readonly flights = new PublishWindow<BatchEntries>({ acked: (batches) => this.acked(batches), failed: () => this.restart() });
  private pumping = false;
  private again = false;
  private stopped = true;
  private failing = false;
  private readonly wakeSignal = new WakeSignal();
  private unsubscribe: (() => void) | undefined;
  private readonly ackUpTo = new Map<string, number>();
  private ackScheduled = false;
  private readonly window: number;
  private readonly readAhead: number;
  private readonly clock: Time;
  private readonly counters = { published: 0, acked: 0, reportsAcked: 0, paced: 0 };

  constructor(private readonly options: GatewayForwarderOptions) {
    for (const [device, address] of options.devices) this.queues.set(device, { address, pending: [], lastPeekedSeq: 0, dirty: true });
    this.order = [...options.devices.keys()];
    this.window = Math.max(1, options.window ?? 8);
    this.readAhead = Math.max(1, options.readAhead ?? 8);
    this.clock = options.time ?? systemTime;
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
   * A sub-device to forward for (a reload), or a new address for one: a device it already knows
   * keeps its place in the outbox, so nothing in flight is sent twice.
   */
  addDevice(device: string, address: string): void {
    const queue = this.queues.get(device);
    // Its peeked and in-flight state stays valid: the next record sent is the one after them.
    if (queue) {
      queue.address = address;
      queue.dirty = true;
    } else {
      // Records acked but not yet deleted from the outbox are not sent again.
      this.queues.set(device, { address, pending: [], lastPeekedSeq: this.ackUpTo.get(device) ?? 0, dirty: true });
    }
    if (!this.order.includes(device)) this.order.push(device);
    this.notify(device);
  }

  /**
   * A sub-device no longer forwarded (a reload): nothing more of it is sent; what is in flight is
   * still acked on its PUBACK, and its other records stay in the outbox.
   */
  removeDevice(device: string): void {
    const index = this.order.indexOf(device);
    if (index < 0) return;
    this.order.splice(index, 1);
    if (this.cursor > index) this.cursor -= 1;
    if (this.order.length > 0) this.cursor %= this.order.length;
    else this.cursor = 0;
    this.dropRetired();
  }

  /** Sub-devices currently forwarded. */
  deviceNames(): string[] {
    return [...this.order];
  }

  /** The highest seq of `device` in a batch awaiting PUBACK. */
  private inFlightSeqOf(device: string): number | undefined {
    let seq: number | undefined;
    for (const entries of this.flights.items()) for (const e of entries) if (e.device === device) seq = Math.max(seq ?? 0, e.seq);
    return seq;
  }

  /** Queues of removed devices are kept only while a batch in flight carries them. */
  private dropRetired(): void {
    for (const device of [...this.queues.keys()]) {
      if (!this.order.includes(device) && this.inFlightSeqOf(device) === undefined) this.queues.delete(device);
    }
  }

  /** New records were committed for `device` (or for any when absent): send what can be sent. */
  notify(device?: string): void {
    if (device !== undefined) {
      const queue = this.queues.get(device);
      if (!queue) return;
      queue.dirty = true;
    }
    if (this.stopped || !this.options.link.isUp) return;
    if (this.pumping) {
      this.again = true;
      this.wakeSignal.fire();
      return;
    }
    void this.pump();
  }

  stats(): GatewayForwarderStats {
    return { ...this.counters, inFlight: this.flights.size };
  }

  /** Forget what is in flight and what was peeked: the next pump starts at each outbox head. */
  private restart(): void {
    this.flushAck();
    this.flights.reset();
    this.dropRetired();
    for (const queue of this.queues.values()) {
      queue.pending = [];
      queue.lastPeekedSeq = 0;
      queue.dirty = true;
    }
    this.wakeSignal.fire();
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    // At most once per pump run: a backlog replay keeps the pump running and never waits.
    let lingered = false;
    try {
      while (!this.stopped && this.options.link.isUp) {
        if (this.flights.size >= this.window) {
          await this.wakeSignal.wait();
          continue;
        }
        this.again = false;
        const candidates = this.candidates();
        if (candidates.length === 0) {
          if (this.again) continue;
          break;
        }
        const delay = this.options.pacer.delayFor(this.clock.now());
        if (delay > 0) {
          this.counters.paced += 1;
          await sleep(this.clock, delay);
          continue;
        }
        if (!lingered && this.worthLingering(candidates)) {
          lingered = true;
          await sleep(this.clock, this.options.lingerMs ?? 0);
          continue;
        }
        lingered = true;
        this.send(candidates);
      }
      this.failing = false;
    } catch (err) {
      // Outbox trouble (I/O error): try again shortly rather than stopping every sub-device.
      if (!this.failing) this.options.log.error({ err }, 'gateway forwarding failed');
      this.failing = true;
      this.clock.setTimer(() => this.notify(), 1000, { unref: true });
    } finally {
      this.pumping = false;
    }
    if (this.again && !this.stopped && this.options.link.isUp) this.notify();
  }

  /** Each device's oldest unsent record, starting at the rotating cursor (fair under the byte bound). */
  private candidates(): BatchCandidate[] {
    const list: BatchCandidate[] = [];
    const count = this.order.length;
    for (let i = 0; i < count; i += 1) {
      const device = this.order[(this.cursor + i) % count];
      const queue = this.queues.get(device) as DeviceQueue;
      if (queue.pending.length === 0 && queue.dirty) {
        queue.dirty = false;
        queue.pending = this.options.outbox.peek(device, this.readAhead, queue.lastPeekedSeq);
        if (queue.pending.length > 0) queue.lastPeekedSeq = queue.pending[queue.pending.length - 1].seq;
        // A full read-ahead means more may be waiting.
        if (queue.pending.length === this.readAhead) queue.dirty = true;
      }
      const head = queue.pending[0];
      if (head) list.push({ device, address: queue.address, seq: head.seq, payload: head.payload });
    }
    return list;
  }

  /** A batch with room left and devices not in it yet. */
  private worthLingering(candidates: readonly BatchCandidate[]): boolean {
    if ((this.options.lingerMs ?? 0) <= 0 || candidates.length >= this.order.length) return false;
    const bytes = candidates.reduce((n, c) => n + c.payload.length + c.address.length + 4, 0);
    return bytes < this.options.maxBatchBytes / 2;
  }

  private send(candidates: BatchCandidate[]): void {
    const batch = packBatch(candidates, this.options.maxBatchBytes);
    for (const entry of batch.entries) this.queues.get(entry.device)?.pending.shift();
    // The next batch starts after the last device this one carried.
    const last = batch.entries[batch.entries.length - 1];
    this.cursor = (this.order.indexOf(last.device) + 1) % this.order.length;
    this.counters.published += 1;
    this.options.onBatch?.(batch.entries.map((e) => e.address));
    this.flights.track(this.options.link.publish(GATEWAY_TOPIC.attributes, batch.payload), batch.entries.map((e) => ({ device: e.device, seq: e.seq })));
  }

  /** The acknowledged prefix of batches grew: each device is acked up to what they carried. */
  private acked(batches: BatchEntries[]): void {
    for (const entries of batches) {
      this.counters.acked += 1;
      this.counters.reportsAcked += entries.length;
      for (const entry of entries) this.ackUpTo.set(entry.device, entry.seq);
    }
    if (this.queues.size > this.order.length) this.dropRetired();
    if (!this.ackScheduled) {
      this.ackScheduled = true;
      this.clock.setTimer(() => this.flushAck(), Math.max(0, this.options.ackDelayMs ?? 10), { unref: true });
    }
    this.wakeSignal.fire();
    if (!this.pumping) this.notify();
  }

  private flushAck(): void {
    this.ackScheduled = false;
    for (const [device, seq] of this.ackUpTo) {
      try {
        this.options.outbox.ack(device, seq);
      } catch (err) {
        this.options.log.error({ device, err }, 'outbox ack failed');
      }
    }
    this.ackUpTo.clear();
  }

}
