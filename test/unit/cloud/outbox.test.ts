import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Outbox, type OutboxDropInfo, type OutboxOptions } from '../../../src/cloud/outbox.js';

let dir: string;
const open: Outbox[] = [];

function make(options: Partial<OutboxOptions> = {}): Outbox {
  const outbox = new Outbox({ path: join(dir, 'outbox.db'), flushIntervalMs: 10_000, flushRecords: 1000, ...options });
  open.push(outbox);
  return outbox;
}

const text = (records: { payload: Buffer }[]) => records.map((r) => r.payload.toString());

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'outbox-'));
});

afterEach(() => {
  for (const outbox of open.splice(0)) outbox.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Outbox', () => {
  it('keeps a FIFO per device and hides records until committed', () => {
    const outbox = make();
    outbox.append('a', 'a1', 1);
    outbox.append('b', 'b1', 2);
    outbox.append('a', 'a2', 3);
    expect(outbox.peek('a', 10)).toEqual([]);
    expect(outbox.stats().buffered).toBe(3);
    outbox.flush();
    const a = outbox.peek('a', 10);
    expect(text(a)).toEqual(['a1', 'a2']);
    expect(a.map((r) => r.ts)).toEqual([1, 3]);
    expect(text(outbox.peek('b', 10))).toEqual(['b1']);
    expect(text(outbox.peek('a', 1))).toEqual(['a1']);
    expect(text(outbox.peek('a', 10, a[0].seq))).toEqual(['a2']);
  });

  it('acks up to a seq and keeps the stats right', () => {
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
    expect(stats).toMatchObject({ depth: 3, bytes: 7, dropped: 0, buffered: 0 });
    expect(outbox.devicesWithBacklog().sort()).toEqual(['a', 'b']);
  });

  it('commits by record count and by timer, and tells who got records', async () => {
    const commits: string[][] = [];
    const outbox = make({ flushRecords: 3, flushIntervalMs: 20, onCommit: (d) => commits.push([...d].sort()) });
    outbox.append('a', '1', 1);
    outbox.append('b', '2', 1);
    expect(commits).toEqual([]);
    outbox.append('a', '3', 1);
    expect(commits).toEqual([['a', 'b']]);
    outbox.append('c', '4', 1);
    await expect.poll(() => commits.length, { timeout: 5000 }).toBe(2);
    expect(commits[1]).toEqual(['c']);
  });

  it('drops the oldest records of a device beyond its byte cap and reports it', () => {
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

  it('drops the globally oldest records beyond the total cap', () => {
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

  it('survives a close and reopen with order, counters and seq continuity', () => {
    const first = make();
    for (let i = 0; i < 100; i += 1) first.append(i % 2 ? 'odd' : 'even', String(i), i);
    first.close();
    const second = make();
    expect(second.stats().depth).toBe(100);
    const even = second.peek('even', 1000);
    expect(text(even)).toEqual(Array.from({ length: 50 }, (_, i) => String(i * 2)));
    second.ack('even', even[49].seq);
    second.append('even', 'new', 1);
    second.flush();
    const after = second.peek('even', 10);
    expect(text(after)).toEqual(['new']);
    expect(after[0].seq).toBeGreaterThan(even[49].seq);
  });

  it('refuses appends after close with a clear error', () => {
    const outbox = make();
    outbox.close();
    expect(() => outbox.append('a', 'x', 1)).toThrow('outbox is closed');
    expect(outbox.peek('a', 1)).toEqual([]);
  });
});
