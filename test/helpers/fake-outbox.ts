// The one in-memory outbox fake for unit tests of the reporter, forwarders and the gateway: it keeps
// per-device FIFOs and seqs like the real modes and records what was appended and acknowledged.
// It passes the outbox contract (test/unit/cloud/outbox-contract.test.ts) except the clauses
// listed in FAKE_OUTBOX_CAPABILITIES: it has no byte caps and nothing survives a close.
import type { OutboxDeviceStats, OutboxRecord, OutboxStats, ReportOutbox } from '../../src/core/outbox-types.js';

export interface AppendedReport {
  device: string;
  payload: string;
  ts: number;
}

/** What an outbox implementation promises beyond the core FIFO/ack/stats/close contract. */
export interface OutboxCapabilities {
  /** Drops the oldest reports beyond maxBytesPerDevice / maxBytesTotal and reports each drop. */
  byteCaps: boolean;
  /** Reports, counters and seqs survive close() and a reopen on the same path. */
  persistence: boolean;
}

export const FAKE_OUTBOX_CAPABILITIES: OutboxCapabilities = { byteCaps: false, persistence: false };

export class FakeOutbox implements ReportOutbox {
  /** Every append, in order, with its payload as text (kept after acks). */
  readonly appended: AppendedReport[] = [];
  /** Every ack call, in order (kept even when it removed nothing). */
  readonly acks: Array<{ device: string; upToSeq: number }> = [];
  private readonly queues = new Map<string, OutboxRecord[]>();
  private seq = 0;
  private closed = false;
  /** Records dropped by discard(), per device. */
  private readonly discarded = new Map<string, number>();

  append(device: string, payload: Buffer | string, ts: number): void {
    if (this.closed) throw new Error('outbox is closed');
    const bytes = Buffer.from(payload);
    this.appended.push({ device, payload: bytes.toString(), ts });
    const queue = this.queues.get(device) ?? [];
    queue.push({ seq: ++this.seq, ts, payload: bytes });
    this.queues.set(device, queue);
  }

  /** Appends text reports to one device; returns their seqs. */
  add(device: string, ...payloads: string[]): number[] {
    return payloads.map((p) => {
      this.append(device, p, 0);
      return this.seq;
    });
  }

  peek(device: string, limit: number, afterSeq = 0): OutboxRecord[] {
    if (this.closed) return [];
    return this.held(device).filter((r) => r.seq > afterSeq).slice(0, limit);
  }

  ack(device: string, upToSeq: number): number {
    if (this.closed) return 0;
    this.acks.push({ device, upToSeq });
    const queue = this.held(device);
    const kept = queue.filter((r) => r.seq > upToSeq);
    this.queues.set(device, kept);
    return queue.length - kept.length;
  }

  discard(device: string): number {
    if (this.closed) return 0;
    const n = this.held(device).length;
    this.queues.set(device, []);
    if (n > 0) this.discarded.set(device, (this.discarded.get(device) ?? 0) + n);
    return n;
  }

  /** A device's records still held, oldest first. */
  held(device: string): OutboxRecord[] {
    return this.queues.get(device) ?? [];
  }

  /** The upToSeq of each ack of a device, in order. */
  ackedUpTo(device: string): number[] {
    return this.acks.filter((a) => a.device === device).map((a) => a.upToSeq);
  }

  stats(): OutboxStats {
    const devices: Record<string, OutboxDeviceStats> = {};
    let depth = 0;
    let bytes = 0;
    let oldest: OutboxRecord | undefined;
    for (const [device, queue] of this.queues) {
      const deviceBytes = queue.reduce((n, r) => n + r.payload.length, 0);
      devices[device] = { depth: queue.length, bytes: deviceBytes, dropped: this.discarded.get(device) ?? 0 };
      depth += queue.length;
      bytes += deviceBytes;
      if (queue[0] && (!oldest || queue[0].seq < oldest.seq)) oldest = queue[0];
    }
    const dropped = [...this.discarded.values()].reduce((n, d) => n + d, 0);
    return { devices, depth, bytes, dropped, buffered: 0, onDisk: 0, diskBytes: 0, oldestTs: oldest?.ts };
  }

  devicesWithBacklog(): string[] {
    return [...this.queues].filter(([, queue]) => queue.length > 0).map(([device]) => device);
  }

  /** Nothing to write: the fake holds everything in memory. */
  flush(): void {}

  close(): void {
    this.closed = true;
  }
}
