// Drains the outbox of every sub-device into the identity's one link as batched
// `gateway/attributes` messages. Guarantees as for a device's own forwarder: each device's
// reports go in order (at most one per batch), a report is acked only after the PUBACK of the
// message that carried it and of every earlier message (so a device's acks never skip ahead),
// publishes are paced by the shared pacer, and on link down everything unacked is sent again
// after the next up. The pump is forward-pump.ts's, shared with a device's own forwarder; this
// file is the gateway's packing.
import type { Logger } from '../../core/logger.js';
import { ForwardPump, type ForwarderLink, type ForwarderOutbox, type PackedMessage, type Packing } from './forward-pump.js';
import { packBatch, type BatchCandidate } from './gateway-batch.js';
import { GATEWAY_TOPIC } from '../mqtt/gateway-topics.js';
import type { OutboxRecord } from '../outbox/outbox.js';
import type { Pacer } from './pacer.js';
import { systemTime, type Time } from '../../core/time.js';

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
  private readonly packing: GatewayPacking;
  private readonly pump: ForwardPump<BatchEntries, BatchCandidate[]>;

  constructor(options: GatewayForwarderOptions) {
    this.packing = new GatewayPacking(options, () => this.pump.inFlightAcks());
    this.pump = new ForwardPump<BatchEntries, BatchCandidate[]>(this.packing, {
      link: options.link, log: options.log, window: Math.max(1, options.window ?? 8), pacer: options.pacer,
      ackDelayMs: Math.max(0, options.ackDelayMs ?? 10), time: options.time ?? systemTime,
      failure: { message: 'gateway forwarding failed', fields: {} },
    });
  }

  start(): void {
    this.pump.start();
  }

  stop(): void {
    this.pump.stop();
  }

  /**
   * A sub-device to forward for (a reload), or a new address for one: a device it already knows
   * keeps its place in the outbox, so nothing in flight is sent twice.
   */
  addDevice(device: string, address: string): void {
    this.packing.addDevice(device, address);
    this.notify(device);
  }

  /**
   * A sub-device no longer forwarded (a reload): nothing more of it is sent; what is in flight is
   * still acked on its PUBACK, and its other records stay in the outbox.
   */
  removeDevice(device: string): void {
    this.packing.removeDevice(device);
  }

  /** Sub-devices currently forwarded. */
  deviceNames(): string[] {
    return this.packing.deviceNames();
  }

  /** New records were committed for `device` (or for any when absent): send what can be sent. */
  notify(device?: string): void {
    if (device !== undefined && !this.packing.markDirty(device)) return;
    this.pump.notify();
  }

  stats(): GatewayForwarderStats {
    return { ...this.pump.counters, reportsAcked: this.packing.reportsAcked, inFlight: this.pump.inFlight };
  }
}

/** The gateway packing: each sub-device's oldest unsent record, at most one per device, in one batch message. */
class GatewayPacking implements Packing<BatchEntries, BatchCandidate[]> {
  private readonly queues = new Map<string, DeviceQueue>();
  private readonly order: string[];
  private cursor = 0;
  private readonly ackUpTo = new Map<string, number>();
  private readonly readAhead: number;
  /** Device reports carried by acknowledged batches. */
  reportsAcked = 0;

  constructor(private readonly options: GatewayForwarderOptions, private readonly inFlight: () => BatchEntries[]) {
    for (const [device, address] of options.devices) this.queues.set(device, { address, pending: [], lastPeekedSeq: 0, dirty: true });
    this.order = [...options.devices.keys()];
    this.readAhead = Math.max(1, options.readAhead ?? 8);
  }

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
  }

  removeDevice(device: string): void {
    const index = this.order.indexOf(device);
    if (index < 0) return;
    this.order.splice(index, 1);
    if (this.cursor > index) this.cursor -= 1;
    if (this.order.length > 0) this.cursor %= this.order.length;
    else this.cursor = 0;
    this.dropRetired();
  }

  deviceNames(): string[] {
    return [...this.order];
  }

  /** New records may wait for `device`; false when it is not forwarded. */
  markDirty(device: string): boolean {
    const queue = this.queues.get(device);
    if (!queue) return false;
    queue.dirty = true;
    return true;
  }

  /** The highest seq of `device` in a batch awaiting PUBACK. */
  private inFlightSeqOf(device: string): number | undefined {
    let seq: number | undefined;
    for (const entries of this.inFlight()) for (const e of entries) if (e.device === device) seq = Math.max(seq ?? 0, e.seq);
    return seq;
  }

  /** Queues of removed devices are kept only while a batch in flight carries them. */
  private dropRetired(): void {
    for (const device of [...this.queues.keys()]) {
      if (!this.order.includes(device) && this.inFlightSeqOf(device) === undefined) this.queues.delete(device);
    }
  }

  /** Forget what was peeked: the next peek starts at each outbox head. */
  reset(): void {
    this.dropRetired();
    for (const queue of this.queues.values()) {
      queue.pending = [];
      queue.lastPeekedSeq = 0;
      queue.dirty = true;
    }
  }

  /** Each device's oldest unsent record, starting at the rotating cursor (fair under the byte bound). */
  peek(): BatchCandidate[] | undefined {
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
    return list.length > 0 ? list : undefined;
  }

  /**
   * Live reports arrive one device at a time: a batch with room left and devices not in it yet
   * waits `lingerMs` once for more.
   */
  lingerMs(candidates: readonly BatchCandidate[]): number {
    const lingerMs = this.options.lingerMs ?? 0;
    if (lingerMs <= 0 || candidates.length >= this.order.length) return 0;
    const bytes = candidates.reduce((n, c) => n + c.payload.length + c.address.length + 4, 0);
    return bytes < this.options.maxBatchBytes / 2 ? lingerMs : 0;
  }

  take(candidates: BatchCandidate[]): PackedMessage<BatchEntries> {
    const batch = packBatch(candidates, this.options.maxBatchBytes);
    for (const entry of batch.entries) this.queues.get(entry.device)?.pending.shift();
    // The next batch starts after the last device this one carried.
    const last = batch.entries[batch.entries.length - 1];
    this.cursor = (this.order.indexOf(last.device) + 1) % this.order.length;
    this.options.onBatch?.(batch.entries.map((e) => e.address));
    return { topic: GATEWAY_TOPIC.attributes, payload: batch.payload, acks: batch.entries.map((e) => ({ device: e.device, seq: e.seq })) };
  }

  /** The acknowledged prefix of batches grew: each device is acked up to what they carried. */
  acknowledged(batches: BatchEntries[]): void {
    for (const entries of batches) {
      this.reportsAcked += entries.length;
      for (const entry of entries) this.ackUpTo.set(entry.device, entry.seq);
    }
    if (this.queues.size > this.order.length) this.dropRetired();
  }

  flushAcks(): void {
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
