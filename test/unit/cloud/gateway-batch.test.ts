// Batched gateway/attributes: byte bounds, one report per device, order, and the forwarder's
// acknowledgements (only on PUBACK, never skipping a batch), pacing and resend after link down.
import { describe, expect, it } from 'vitest';
import { packBatch, type BatchCandidate } from '../../../src/cloud/forwarding/gateway-batch.js';
import { GatewayForwarder } from '../../../src/cloud/forwarding/gateway-forwarder.js';
import type { ForwarderLink, ForwarderOutbox } from '../../../src/cloud/forwarding/forwarder.js';
import { LinkDownError, type LinkEvent } from '../../../src/cloud/mqtt/link.js';
import type { OutboxRecord } from '../../../src/cloud/outbox/outbox.js';
import { silentLogger } from '../../../src/ops/log.js';
import { eventLoopTurns, ManualClock } from '../../helpers/manual-clock.js';

const c = (device: string, address: string, seq: number, report: Record<string, unknown>): BatchCandidate => ({ device, address, seq, payload: Buffer.from(JSON.stringify(report)) });

describe('packBatch', () => {
  const a1 = c('a', '1', 1, { v: 1 });
  const b2 = c('b', '2', 7, { v: 2, w: 'x' });
  const big = c('big', '9', 3, { blob: 'x'.repeat(200) });
  it.each<[string, BatchCandidate[], number, string[]]>([
    ['everything fits', [a1, b2], 1024, ['a', 'b']],
    ['exactly at the bound', [a1, b2], '{"1":{"v":1},"2":{"v":2,"w":"x"}}'.length, ['a', 'b']],
    ['one byte under the bound leaves the second', [a1, b2], '{"1":{"v":1},"2":{"v":2,"w":"x"}}'.length - 1, ['a']],
    ['an oversized report goes alone when first', [big, a1], 64, ['big']],
    ['an oversized report waits while smaller ones go', [a1, big, b2], 64, ['a', 'b']],
    ['a device twice (two records) is carried once', [a1, c('a', '1', 2, { v: 3 }), b2], 1024, ['a', 'b']],
    ['an address twice (JSON keeps the last) is carried once', [a1, c('x', '1', 1, { v: 3 })], 1024, ['a']],
    ['nothing to send', [], 1024, []],
  ])('%s', (_name, candidates, maxBytes, devices) => {
    const batch = packBatch(candidates, maxBytes);
    expect(batch.entries.map((e) => e.device)).toEqual(devices);
    const parsed = JSON.parse(batch.payload.toString()) as Record<string, unknown>;
    // The payload carries exactly the chosen reports under their addresses, byte for byte.
    expect(Object.keys(parsed)).toEqual(batch.entries.map((e) => e.address));
    for (const entry of batch.entries) expect(JSON.stringify(parsed[entry.address])).toBe(entry.payload.toString());
    if (batch.entries.length > 1) expect(batch.payload.length).toBeLessThanOrEqual(maxBytes);
  });

  it('escapes addresses as JSON keys', () => {
    const batch = packBatch([c('q', 'line "1"/4\\', 1, { v: 1 })], 1024);
    expect(JSON.parse(batch.payload.toString())).toEqual({ 'line "1"/4\\': { v: 1 } });
  });
});

class Outbox implements ForwarderOutbox {
  private readonly records = new Map<string, OutboxRecord[]>();
  private seq = 0;
  readonly acks: [string, number][] = [];
  add(device: string, ...values: number[]): void {
    this.addPadded(device, 0, ...values);
  }
  addPadded(device: string, pad: number, ...values: number[]): void {
    const list = this.records.get(device) ?? [];
    for (const v of values) list.push({ seq: ++this.seq, ts: 0, payload: Buffer.from(JSON.stringify(pad > 0 ? { v, pad: 'x'.repeat(pad) } : { v })) });
    this.records.set(device, list);
  }
  peek(device: string, limit: number, afterSeq = 0): OutboxRecord[] {
    return (this.records.get(device) ?? []).filter((r) => r.seq > afterSeq).slice(0, limit);
  }
  ack(device: string, upToSeq: number): number {
    this.acks.push([device, upToSeq]);
    const list = this.records.get(device) ?? [];
    this.records.set(device, list.filter((r) => r.seq > upToSeq));
    return list.length - (this.records.get(device)?.length ?? 0);
  }
  left(device: string): number[] {
    return (this.records.get(device) ?? []).map((r) => (JSON.parse(r.payload.toString()) as { v: number }).v);
  }
}

class Link implements ForwarderLink {
  isUp = true;
  readonly pending: { payload: string; resolve: () => void; reject: (e: Error) => void }[] = [];
  readonly sent: Record<string, { v: number }>[] = [];
  private readonly listeners = new Set<(event: LinkEvent) => void>();
  publish(topic: string, payload: Buffer): Promise<void> {
    expect(topic).toBe('gateway/attributes');
    if (!this.isUp) return Promise.reject(new LinkDownError('gw'));
    this.sent.push(JSON.parse(payload.toString()) as Record<string, { v: number }>);
    return new Promise((resolve, reject) => this.pending.push({ payload: payload.toString(), resolve, reject }));
  }
  onEvent(listener: (event: LinkEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  ack(index = 0): void {
    this.pending.splice(index, 1)[0].resolve();
  }
  ackAll(): void {
    for (const p of this.pending.splice(0)) p.resolve();
  }
  down(): void {
    this.isUp = false;
    for (const p of this.pending.splice(0)) p.reject(new LinkDownError('gw'));
    for (const l of this.listeners) l({ type: 'down', reason: 'test' });
  }
  up(): void {
    this.isUp = true;
    for (const l of this.listeners) l({ type: 'up' });
  }
}

function rig(options: { window?: number; maxBatchBytes?: number; lingerMs?: number; pacer?: { delayFor(now: number): number } } = {}) {
  const clock = new ManualClock();
  const outbox = new Outbox();
  const link = new Link();
  const devices = new Map([['a', '1'], ['b', '2'], ['c', '3']]);
  const forwarder = new GatewayForwarder({ devices, outbox, link, log: silentLogger(), pacer: options.pacer ?? { delayFor: () => 0 }, maxBatchBytes: options.maxBatchBytes ?? 65_536, window: options.window ?? 4, lingerMs: options.lingerMs, time: clock });
  const settle = async () => {
    await eventLoopTurns();
    clock.advance(10);
    await eventLoopTurns();
  };
  return { clock, outbox, link, forwarder, settle };
}

describe('GatewayForwarder', () => {
  it('carries each device once per batch, in each device\'s order', async () => {
    const { outbox, link, forwarder, settle } = rig();
    outbox.add('a', 1, 2, 3);
    outbox.add('b', 10);
    outbox.add('c', 20, 21);
    forwarder.start();
    await settle();
    expect(link.sent).toEqual([{ 1: { v: 1 }, 2: { v: 10 }, 3: { v: 20 } }, { 1: { v: 2 }, 3: { v: 21 } }, { 1: { v: 3 } }]);
  });

  it('acks nothing before the PUBACK, then each device up to what the batch carried', async () => {
    const { outbox, link, forwarder, settle } = rig();
    outbox.add('a', 1, 2);
    outbox.add('b', 10);
    forwarder.start();
    await settle();
    expect(outbox.acks).toEqual([]);
    link.ack(0);
    await settle();
    expect(outbox.left('a')).toEqual([2]);
    expect(outbox.left('b')).toEqual([]);
  });

  it('a later PUBACK first acks nothing until the earlier batch is acknowledged too', async () => {
    const { outbox, link, forwarder, settle } = rig();
    outbox.add('a', 1, 2);
    forwarder.start();
    await settle();
    link.ack(1);
    await settle();
    expect(outbox.left('a')).toEqual([1, 2]);
    link.ack(0);
    await settle();
    expect(outbox.left('a')).toEqual([]);
  });

  it('keeps at most `window` batches in flight', async () => {
    const { outbox, link, forwarder, settle } = rig({ window: 2 });
    outbox.add('a', 1, 2, 3, 4, 5);
    forwarder.start();
    await settle();
    expect(link.sent).toHaveLength(2);
    link.ack(0);
    await settle();
    expect(link.sent).toHaveLength(3);
  });

  it('respects the byte bound, rotating so no device starves', async () => {
    const { outbox, link, forwarder, settle } = rig({ maxBatchBytes: 1024 });
    // Each report is ~420 bytes: two fit in one batch, never three.
    for (const device of ['a', 'b', 'c']) outbox.addPadded(device, 400, 1, 2);
    forwarder.start();
    await settle();
    link.ackAll();
    await settle();
    link.ackAll();
    await settle();
    // (JSON objects list integer-like keys in ascending order.) Device c is not left for last.
    expect(link.sent.map((m) => Object.keys(m))).toEqual([['1', '2'], ['1', '3'], ['2', '3']]);
    expect(Math.max(...link.sent.map((m) => JSON.stringify(m).length))).toBeLessThanOrEqual(1024);
  });

  it('after link down, sends everything unacked again, in order, after up', async () => {
    const { outbox, link, forwarder, settle } = rig();
    outbox.add('a', 1, 2);
    outbox.add('b', 10);
    forwarder.start();
    await settle();
    link.ack(0);
    await settle();
    link.down();
    await settle();
    expect(outbox.left('a')).toEqual([2]);
    link.sent.length = 0;
    link.up();
    await settle();
    expect(link.sent).toEqual([{ 1: { v: 2 } }]);
    link.ackAll();
    await settle();
    expect(outbox.left('a')).toEqual([]);
  });

  it('waits for the pacer between batches', async () => {
    let tokens = 1;
    const { outbox, link, forwarder, settle, clock } = rig({ pacer: { delayFor: () => (tokens-- > 0 ? 0 : 100) } });
    outbox.add('a', 1, 2);
    forwarder.start();
    await settle();
    expect(link.sent).toHaveLength(1);
    tokens = 1;
    clock.advance(100);
    await settle();
    expect(link.sent).toHaveLength(2);
  });

  it('ignores notifications for devices it does not carry', async () => {
    const { outbox, link, forwarder, settle } = rig();
    outbox.add('zz', 1);
    forwarder.start();
    forwarder.notify('zz');
    await settle();
    expect(link.sent).toEqual([]);
  });

  it('lingers once for live reports of other devices, then sends them in one batch', async () => {
    const { outbox, link, forwarder, clock } = rig({ lingerMs: 100 });
    forwarder.start();
    outbox.add('a', 1);
    forwarder.notify('a');
    await eventLoopTurns();
    clock.advance(50);
    await eventLoopTurns();
    expect(link.sent).toEqual([]);
    outbox.add('b', 10);
    forwarder.notify('b');
    await eventLoopTurns();
    clock.advance(50);
    await eventLoopTurns();
    expect(link.sent).toEqual([{ 1: { v: 1 }, 2: { v: 10 } }]);
  });

  it('does not linger when every device is in the batch, nor again while a backlog is replayed', async () => {
    const { outbox, link, forwarder } = rig({ lingerMs: 100_000, window: 10 });
    outbox.add('a', 1, 2, 3);
    outbox.add('b', 10, 11, 12);
    outbox.add('c', 20);
    forwarder.start();
    await eventLoopTurns();
    // The first batch has every device: sent at once; the rest (a and b only) without waiting either.
    expect(link.sent).toEqual([{ 1: { v: 1 }, 2: { v: 10 }, 3: { v: 20 } }, { 1: { v: 2 }, 2: { v: 11 } }, { 1: { v: 3 }, 2: { v: 12 } }]);
  });

  it('with lingering, a lone device still gets sent after the linger, not never', async () => {
    const { outbox, link, forwarder, clock } = rig({ lingerMs: 100 });
    outbox.add('a', 1);
    forwarder.start();
    await eventLoopTurns();
    expect(link.sent).toEqual([]);
    clock.advance(100);
    await eventLoopTurns();
    expect(link.sent).toEqual([{ 1: { v: 1 } }]);
  });
});

describe('GatewayForwarder reload (devices added and removed)', () => {
  it('a removed device sends nothing more; its batch in flight is still acked; the rest stays queued', async () => {
    const { outbox, link, forwarder, settle } = rig({ window: 1 });
    outbox.add('a', 1, 2);
    outbox.add('b', 10, 11);
    forwarder.start();
    await settle();
    expect(link.sent).toEqual([{ 1: { v: 1 }, 2: { v: 10 } }]);
    forwarder.removeDevice('b');
    expect(forwarder.deviceNames()).toEqual(['a', 'c']);
    link.ackAll();
    await settle();
    link.ackAll();
    await settle();
    expect(link.sent).toEqual([{ 1: { v: 1 }, 2: { v: 10 } }, { 1: { v: 2 } }]);
    expect(outbox.left('b')).toEqual([11]);
    expect(outbox.left('a')).toEqual([]);
  });

  it('a device removed and added again (replaced) while in flight goes on after what was in flight: nothing twice', async () => {
    const { outbox, link, forwarder, settle } = rig({ window: 2 });
    outbox.add('a', 1, 2, 3);
    forwarder.start();
    await settle();
    expect(link.sent).toEqual([{ 1: { v: 1 } }, { 1: { v: 2 } }]);
    forwarder.removeDevice('a');
    forwarder.addDevice('a', 'one');
    link.ackAll();
    await settle();
    link.ackAll();
    await settle();
    // Each value exactly once; the new address from the first record not yet sent.
    expect(link.sent).toEqual([{ 1: { v: 1 } }, { 1: { v: 2 } }, { one: { v: 3 } }]);
    expect(outbox.left('a')).toEqual([]);
  });

  it('a device added again after its acks (not yet written) starts after them', async () => {
    const { outbox, link, forwarder, clock } = rig({ window: 1 });
    outbox.add('a', 1, 2);
    forwarder.start();
    await eventLoopTurns();
    forwarder.removeDevice('a');
    link.ackAll(); // acked, deletion pending (ack batching); the queue is dropped
    await eventLoopTurns();
    forwarder.addDevice('a', '1');
    clock.advance(10);
    await eventLoopTurns();
    link.ackAll();
    await eventLoopTurns();
    clock.advance(10);
    await eventLoopTurns();
    expect(link.sent).toEqual([{ 1: { v: 1 } }, { 1: { v: 2 } }]);
    expect(outbox.left('a')).toEqual([]);
  });

  it('an added device is forwarded at once; a removed one that returns gets its kept records', async () => {
    const { outbox, link, forwarder, settle } = rig();
    forwarder.start();
    forwarder.removeDevice('c');
    outbox.add('c', 30);
    outbox.add('new', 40);
    forwarder.addDevice('new', '9');
    await settle();
    expect(link.sent).toEqual([{ 9: { v: 40 } }]);
    forwarder.addDevice('c', '3');
    await settle();
    expect(link.sent).toEqual([{ 9: { v: 40 } }, { 3: { v: 30 } }]);
  });
});
