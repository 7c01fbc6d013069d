// The contract every outbox implementation passes, the test fake included: per-device FIFO, ack by
// seq, stats, refusal after close; and, where an implementation declares the capability, byte caps
// over everything held and reopen with order and seq continuity. Mode-specific timing is tested in
// each mode's file.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openOutbox } from '../../../src/cloud/outbox/open-outbox.js';
import type { OutboxDropInfo, OutboxReadState, ReportOutbox } from '../../../src/core/outbox-types.js';
import { OutboxStore } from '../../../src/cloud/outbox/outbox-store.js';
import type { OutboxOptions } from '../../../src/cloud/outbox/outbox-options.js';
import { FAKE_OUTBOX_CAPABILITIES, FakeOutbox, type OutboxCapabilities } from '../../helpers/fake-outbox.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { checkpoint, touch, zeroPageHolding } from '../../helpers/outbox-file.js';

let dir: string;
const open: ReportOutbox[] = [];
const text = (records: { payload: Buffer }[]) => records.map((r) => r.payload.toString());

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'outbox-contract-'));
});

afterEach(() => {
  vi.restoreAllMocks();
  for (const outbox of open.splice(0)) outbox.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Implementation {
  name: string;
  capabilities: OutboxCapabilities;
  open(options: OutboxOptions): ReportOutbox;
}

const everything: OutboxCapabilities = { byteCaps: true, persistence: true };
const implementations: Implementation[] = [
  { name: 'write-ahead', capabilities: everything, open: (options) => openOutbox('write-ahead', options) },
  { name: 'memory-first', capabilities: everything, open: (options) => openOutbox('memory-first', options) },
  { name: 'test fake', capabilities: FAKE_OUTBOX_CAPABILITIES, open: () => new FakeOutbox() },
];

describe.each(implementations)('outbox contract: $name', ({ name, capabilities, open: openImplementation }) => {
  function make(options: Partial<OutboxOptions> = {}): ReportOutbox {
    const outbox = openImplementation({ path: join(dir, 'outbox.db'), flushIntervalMs: 10_000, flushRecords: 1000, durableAfterMs: 10_000, time: new ManualClock(), ...options });
    open.push(outbox);
    return outbox;
  }
  // A clause an implementation does not promise (its capabilities above) is not registered for it;
  // the fake's lack of caps is checked by the opposite clause below.
  const when = (capable: boolean) => (title: string, body: () => void | Promise<void>) => {
    if (capable) it(title, body);
  };
  const withByteCaps = when(capabilities.byteCaps);
  const withPersistence = when(capabilities.persistence);

  it('keeps a FIFO per device with sample times, and peeks after a seq', () => {
    const outbox = make();
    outbox.append('a', 'a1', 1);
    outbox.append('b', 'b1', 2);
    outbox.append('a', 'a2', 3);
    outbox.flush();
    const a = outbox.peek('a', 10);
    expect(text(a)).toEqual(['a1', 'a2']);
    expect(a.map((r) => r.ts)).toEqual([1, 3]);
    expect(text(outbox.peek('b', 10))).toEqual(['b1']);
    expect(text(outbox.peek('a', 1))).toEqual(['a1']);
    expect(text(outbox.peek('a', 10, a[0].seq))).toEqual(['a2']);
    expect(outbox.peek('nobody', 10)).toEqual([]);
  });

  it('acks up to a seq, twice is harmless, and the stats stay right', () => {
    const outbox = make();
    for (let i = 0; i < 5; i += 1) outbox.append('a', `r${i}`, i);
    outbox.append('b', 'xyz', 9);
    outbox.flush();
    const records = outbox.peek('a', 10);
    expect(outbox.ack('a', records[2].seq)).toBe(3);
    expect(text(outbox.peek('a', 10))).toEqual(['r3', 'r4']);
    expect(outbox.ack('a', records[2].seq)).toBe(0);
    const stats = outbox.stats();
    expect(stats.devices.a).toEqual({ depth: 2, bytes: 4, dropped: 0 });
    expect(stats.devices.b).toEqual({ depth: 1, bytes: 3, dropped: 0 });
    expect(stats).toMatchObject({ depth: 3, bytes: 7, dropped: 0, buffered: 0, oldestTs: 3 });
    expect(outbox.devicesWithBacklog().sort()).toEqual(['a', 'b']);
  });

  it('keeps order across records written before and after a flush', () => {
    const outbox = make();
    outbox.append('a', 'old1', 1);
    outbox.append('a', 'old2', 2);
    outbox.flush();
    outbox.append('a', 'new1', 3);
    outbox.append('a', 'new2', 4);
    if (name === 'write-ahead') outbox.flush();
    const all = outbox.peek('a', 10);
    expect(text(all)).toEqual(['old1', 'old2', 'new1', 'new2']);
    expect(text(outbox.peek('a', 10, all[1].seq))).toEqual(['new1', 'new2']);
    expect(text(outbox.peek('a', 3))).toEqual(['old1', 'old2', 'new1']);
    outbox.ack('a', all[2].seq);
    expect(text(outbox.peek('a', 10))).toEqual(['new2']);
    expect(outbox.stats().depth).toBe(1);
  });

  withByteCaps('byte caps: drops the oldest records of a device beyond its byte cap and reports it', () => {
    const drops: OutboxDropInfo[] = [];
    const outbox = make({ maxBytesPerDevice: 10, onDrop: (d) => drops.push(d) });
    for (let i = 0; i < 6; i += 1) outbox.append('a', `r${i}`, i);
    outbox.append('b', 'bb', 0);
    outbox.flush();
    expect(text(outbox.peek('a', 10))).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
    expect(drops).toEqual([{ device: 'a', records: 1, bytes: 2, reason: 'device-cap' }]);
    expect(outbox.stats().devices.a).toEqual({ depth: 5, bytes: 10, dropped: 1 });
    outbox.append('a', 'x'.repeat(11), 1);
    expect(drops[1]).toEqual({ device: 'a', records: 1, bytes: 11, reason: 'record-too-large' });
    expect(outbox.stats().dropped).toBe(2);
  });

  // The flag is checked both ways: an implementation that says it has no caps must not drop silently.
  when(!capabilities.byteCaps)('no byte caps: keeps every report beyond the caps and reports no drop', () => {
    const drops: OutboxDropInfo[] = [];
    const outbox = make({ maxBytesPerDevice: 4, maxBytesTotal: 4, onDrop: (d) => drops.push(d) });
    for (let i = 0; i < 6; i += 1) outbox.append('a', `r${i}`, i);
    expect(text(outbox.peek('a', 10))).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
    expect(outbox.stats()).toMatchObject({ depth: 6, bytes: 12, dropped: 0 });
    expect(drops).toEqual([]);
  });

  withByteCaps('byte caps: beyond the total cap drops the oldest records of the device holding the most (a tie: the first device)', () => {
    const drops: OutboxDropInfo[] = [];
    const outbox = make({ maxBytesTotal: 6, onDrop: (d) => drops.push(d) });
    outbox.append('a', 'a1', 1);
    outbox.append('b', 'b1', 2);
    outbox.append('a', 'a2', 3);
    outbox.append('b', 'b2', 4);
    outbox.flush();
    expect(text(outbox.peek('a', 10))).toEqual(['a2']);
    expect(text(outbox.peek('b', 10))).toEqual(['b1', 'b2']);
    expect(drops).toEqual([{ device: 'a', records: 1, bytes: 2, reason: 'total-cap' }]);
    expect(outbox.stats().bytes).toBe(6);
  });

  withByteCaps('byte caps: counts disk and memory under one total cap', () => {
    const drops: OutboxDropInfo[] = [];
    const outbox = make({ maxBytesTotal: 8, onDrop: (d) => drops.push(d) });
    outbox.append('a', 'a1', 1);
    outbox.append('b', 'b1', 2);
    outbox.flush();
    outbox.append('a', 'a2', 3);
    outbox.append('b', 'b2', 4);
    outbox.append('a', 'a3', 5);
    outbox.flush();
    expect(outbox.stats().bytes).toBeLessThanOrEqual(8);
    expect(text(outbox.peek('a', 10))).toEqual(['a2', 'a3']);
    expect(text(outbox.peek('b', 10))).toEqual(['b1', 'b2'].slice(drops.some((d) => d.device === 'b') ? 1 : 0));
    expect(drops.reduce((n, d) => n + d.records, 0)).toBe(1);
  });

  withPersistence('persistence: survives a close and reopen with order, counters and seq continuity', () => {
    const first = make();
    for (let i = 0; i < 100; i += 1) first.append(i % 2 ? 'odd' : 'even', String(i), i);
    first.close();
    const second = make();
    expect(second.stats().depth).toBe(100);
    expect(second.stats().onDisk).toBe(100);
    const even = second.peek('even', 1000);
    expect(text(even)).toEqual(Array.from({ length: 50 }, (_, i) => String(i * 2)));
    second.ack('even', even[49].seq);
    second.append('even', 'new', 1);
    second.flush();
    const after = second.peek('even', 10);
    expect(text(after)).toEqual(['new']);
    expect(after[0].seq).toBeGreaterThan(even[49].seq);
    second.close();
    const third = make();
    expect(text(third.peek('even', 10))).toEqual(['new']);
    expect(third.stats().devices.odd.depth).toBe(50);
  });

  withPersistence('read errors: a failed disk read holds the device at its unread rows, is retried with backoff and shown, and nothing unread is acknowledged', () => {
    const clock = new ManualClock();
    const woken: string[] = [];
    const reads: OutboxReadState[] = [];
    const outbox = make({ time: clock, storageRetryMs: 1000, onCommit: (devices) => woken.push(...devices), onReads: (r) => reads.push(r) });
    for (let i = 0; i < 5; i += 1) outbox.append('a', `disk${i}`, i);
    outbox.flush();
    // 3 newer: in memory (memory-first), awaiting their commit (write-ahead).
    for (let i = 0; i < 3; i += 1) outbox.append('a', `new${i}`, 10 + i);
    const failing = vi.spyOn(OutboxStore.prototype, 'after').mockImplementation(() => {
      throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_READ' });
    });
    expect(outbox.peek('a', 10)).toEqual([]);
    expect(outbox.peek('a', 10)).toEqual([]);
    // A forwarder acking what it believes it sent (the newest seq) counts nothing unread.
    expect(outbox.ack('a', Number.MAX_SAFE_INTEGER)).toBe(0);
    expect(outbox.stats()).toMatchObject({ depth: 8, dropped: 0, reads: { state: 'failing', cause: 'SQLITE_IOERR_READ: disk I/O error' } });
    expect(reads.map((r) => r.state)).toEqual(['failing']);
    woken.length = 0;
    clock.advance(1000);
    expect(woken).toEqual(['a']);
    // Still failing: the next retry waits twice as long.
    expect(outbox.peek('a', 10)).toEqual([]);
    woken.length = 0;
    clock.advance(1999);
    expect(woken).toEqual([]);
    clock.advance(1);
    expect(woken).toEqual(['a']);
    failing.mockRestore();
    outbox.flush();
    const all = outbox.peek('a', 10);
    expect(text(all)).toEqual(['disk0', 'disk1', 'disk2', 'disk3', 'disk4', 'new0', 'new1', 'new2']);
    expect(reads.map((r) => r.state)).toEqual(['failing', 'ok']);
    expect(outbox.ack('a', all[7].seq)).toBe(8);
    outbox.flush();
    expect(outbox.stats()).toMatchObject({ depth: 0, dropped: 0, reads: { state: 'ok' } });
  });

  withPersistence('read errors: an ack counts only what a peek handed out', () => {
    const outbox = make();
    for (let i = 0; i < 5; i += 1) outbox.append('a', `r${i}`, i);
    outbox.flush();
    const firstTwo = outbox.peek('a', 2);
    expect(outbox.ack('a', firstTwo[1].seq + 100)).toBe(2);
    expect(text(outbox.peek('a', 10))).toEqual(['r2', 'r3', 'r4']);
    expect(outbox.stats().depth).toBe(3);
  });

  withPersistence('read errors: SQLITE_CORRUPT from a sound file (an I/O error SQLite calls corruption) costs nothing', () => {
    const clock = new ManualClock();
    const drops: OutboxDropInfo[] = [];
    const outbox = make({ time: clock, storageRetryMs: 1000, onDrop: (d) => drops.push(d) });
    for (let i = 0; i < 5; i += 1) outbox.append('a', `r${i}`, i);
    outbox.flush();
    const failing = vi.spyOn(OutboxStore.prototype, 'after').mockImplementationOnce(() => {
      throw Object.assign(new Error('database disk image is malformed'), { code: 'SQLITE_CORRUPT' });
    });
    expect(outbox.peek('a', 10)).toEqual([]);
    failing.mockRestore();
    clock.advance(1000);
    expect(text(outbox.peek('a', 10))).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    expect(drops).toEqual([]);
    expect(readdirSync(dir).filter((f) => f.includes('corrupt'))).toEqual([]);
  });

  withPersistence('salvage: zeroed pages found while running cost their own rows, counted once, in order', () => {
    const clock = new ManualClock();
    const drops: OutboxDropInfo[] = [];
    const path = join(dir, 'outbox.db');
    // A zeroed page is damage for good: given up at its first corrupt verdicts.
    const outbox = make({ time: clock, storageRetryMs: 1000, condemnAfterMs: 0, onDrop: (d) => drops.push(d) });
    const polled = 400;
    for (let i = 0; i < polled; i += 1) outbox.append('a', `report-${String(i).padStart(4, '0')}-padding-padding`, i);
    outbox.flush();
    const sent = outbox.peek('a', 100);
    outbox.ack('a', sent[99].seq);
    checkpoint(path);
    zeroPageHolding(path, 'report-0150-');
    zeroPageHolding(path, 'report-0250-');
    touch(path);
    let after = sent[99].seq;
    const delivered = sent.map((r) => r.payload.toString());
    expect(outbox.peek('a', 1000, after)).toEqual([]);
    clock.advance(1000);
    for (let batch = outbox.peek('a', 50, after); batch.length > 0; batch = outbox.peek('a', 50, after)) {
      delivered.push(...text(batch));
      after = batch[batch.length - 1].seq;
      outbox.ack('a', after);
    }
    const counted = drops.filter((d) => d.reason === 'file-lost').reduce((n, d) => n + d.records, 0);
    expect(counted).toBeGreaterThan(0);
    expect(delivered).not.toContain('report-0250-padding-padding');
    expect(new Set(delivered).size).toBe(delivered.length);
    expect(delivered.length + counted).toBe(polled);
    expect(outbox.stats()).toMatchObject({ depth: 0, dropped: counted });
  });

  it('refuses appends after close with a clear error', () => {
    const outbox = make();
    outbox.close();
    expect(() => outbox.append('a', 'x', 1)).toThrow('outbox is closed');
    expect(outbox.peek('a', 1)).toEqual([]);
    expect(outbox.ack('a', 1)).toBe(0);
  });
});
