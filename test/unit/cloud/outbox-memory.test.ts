import { describe, expect, it } from 'vitest';
import { deadlineFor, MemoryQueue } from '../../../src/cloud/outbox/outbox-memory.js';

const b = (s: string) => Buffer.from(s);

describe('deadlineFor', () => {
  it.each([
    // now, window, deadline
    [0, 1000, 1000],
    [1, 1000, 1000],
    [499, 1000, 1000],
    [500, 1000, 1500],
    [999, 1000, 1500],
    [1_700_000_000_123, 1000, 1_700_000_001_000],
    [10, 0, 10],
    [10, 1, 10],
  ])('appended at %d with a %d ms window: due at %d', (now, window, expected) => {
    const due = deadlineFor(now, window);
    expect(due).toBe(expected);
    expect(due).toBeLessThanOrEqual(now + window);
  });
});

describe('MemoryQueue', () => {
  function filled(): MemoryQueue {
    const q = new MemoryQueue(1000);
    q.push('a', 1, 10, b('a1'), 0);
    q.push('b', 2, 20, b('bb2'), 100);
    q.push('a', 3, 30, b('a3'), 600);
    q.push('a', 4, 40, b('a4'), 600);
    return q;
  }

  it('counts records and bytes per device and in total', () => {
    const q = filled();
    expect([q.size, q.bytes, q.deviceCount('a'), q.deviceBytes('a'), q.deviceBytes('zz')]).toEqual([4, 9, 3, 6, 0]);
    expect(q.devices().sort()).toEqual(['a', 'b']);
    expect(q.oldestTs()).toBe(10);
  });

  it.each([
    [0, 10, [1, 3, 4]],
    [1, 10, [3, 4]],
    [2, 10, [3, 4]],
    [3, 1, [4]],
    [4, 10, []],
    [0, 0, []],
  ])('after seq %d, limit %d', (afterSeq, limit, seqs) => {
    expect(filled().after('a', afterSeq, limit).map((r) => r.seq)).toEqual(seqs);
  });

  it('acks a prefix only, and only of its device', () => {
    const q = filled();
    expect(q.ackThrough('a', 3)).toEqual({ records: 2, bytes: 4 });
    expect(q.ackThrough('a', 3)).toEqual({ records: 0, bytes: 0 });
    expect(q.ackThrough('nobody', 99)).toEqual({ records: 0, bytes: 0 });
    expect(q.after('a', 0, 10).map((r) => r.seq)).toEqual([4]);
    expect([q.size, q.bytes]).toEqual([2, 5]);
  });

  it.each([
    // now, seqs due
    [999, []],
    [1000, [1, 2, 3, 4]],
  ])('at %d the records of devices with a due head are %j, oldest first', (now, seqs) => {
    const q = filled();
    expect(q.due(now).map((r) => r.seq)).toEqual(seqs);
    expect(q.isDue(now)).toBe(seqs.length > 0);
  });

  it('leaves a device whose head is not due yet in memory', () => {
    const q = filled();
    q.push('c', 5, 50, b('c5'), 1200);
    expect(q.due(1000).map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    expect(q.due(2000).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it('drops fairly: the oldest of the device holding the most, until enough bytes are freed', () => {
    const q = filled();
    // a holds 6 bytes, b 3: a loses a1, then (a 4 vs b 3) a3.
    const dropped = q.dropFairly(4);
    expect(Object.fromEntries(dropped)).toEqual({ a: { records: 2, bytes: 4 } });
    expect(q.all().map((r) => r.seq)).toEqual([2, 4]);
    expect([q.deviceBytes('a'), q.deviceBytes('b'), q.bytes]).toEqual([2, 3, 5]);
  });

  it('drops fairly counting what a device holds elsewhere (its disk rows)', () => {
    const q = filled();
    const dropped = q.dropFairly(3, (device) => (device === 'b' ? 100 : 0));
    expect(Object.fromEntries(dropped)).toEqual({ b: { records: 1, bytes: 3 } });
    expect(q.all().map((r) => r.seq)).toEqual([1, 3, 4]);
  });

  it.each([
    // fast device's records, slow device's records, bytes to free: the slow one keeps all
    [200, 20, 100],
    [2000, 10, 1500],
    [50, 50, 40],
  ])('a fast device (%d reports) does not evict a slow one (%d reports) freeing %d bytes', (fast, slow, excess) => {
    const q = new MemoryQueue(1000);
    let seq = 0;
    for (let i = 0; i < slow; i += 1) q.push('slow', ++seq, seq, b('xx'), 0);
    for (let i = 0; i < fast; i += 1) q.push('fast', ++seq, seq, b('xx'), 0);
    const dropped = q.dropFairly(excess * 2);
    const slowLost = dropped.get('slow')?.records ?? 0;
    const fastLost = dropped.get('fast')?.records ?? 0;
    expect(slowLost + fastLost).toBe(excess);
    // The slow device loses only once the fast one is down to its size.
    expect(q.deviceCount('slow')).toBe(Math.min(slow, Math.ceil((fast + slow - excess) / 2)));
  });

  it('drops a device\'s oldest records only', () => {
    const q = filled();
    expect(q.dropOldestOf('a', 3)).toEqual({ records: 2, bytes: 4 });
    expect(q.all().map((r) => r.seq)).toEqual([2, 4]);
    expect(new MemoryQueue(10).nextDeadline()).toBeUndefined();
  });
});
