import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryFirstOutbox } from '../../../src/cloud/outbox/memory-first-outbox.js';
import { OutboxStore } from '../../../src/cloud/outbox/outbox-store.js';
import type { OutboxOptions } from '../../../src/cloud/outbox/outbox-options.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { rowsIn } from '../../helpers/outbox-file.js';

let dir: string;
// Manual time: the durability deadlines fire only when a test advances it.
let clock = new ManualClock();
const open: MemoryFirstOutbox[] = [];
const text = (records: { payload: Buffer }[]) => records.map((r) => r.payload.toString());

/** Rows in the file as another process would see them. */
const rowsOnDisk = () => rowsIn(join(dir, 'outbox.db'));

function make(options: Partial<OutboxOptions> = {}): MemoryFirstOutbox {
  const outbox = new MemoryFirstOutbox({ path: join(dir, 'outbox.db'), durableAfterMs: 1000, time: clock, ...options });
  open.push(outbox);
  return outbox;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'outbox-mf-'));
  clock = new ManualClock();
});

afterEach(() => {
  for (const outbox of open.splice(0)) outbox.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('MemoryFirstOutbox', () => {
  it('hands records to the forwarder at once and tells who got them, once per turn', async () => {
    const woken: string[][] = [];
    const outbox = make({ onCommit: (d) => woken.push([...d].sort()) });
    outbox.append('a', 'a1', 1);
    outbox.append('b', 'b1', 2);
    outbox.append('a', 'a2', 3);
    expect(text(outbox.peek('a', 10))).toEqual(['a1', 'a2']);
    await Promise.resolve();
    expect(woken).toEqual([['a', 'b']]);
  });

  it('never writes a report acknowledged before its deadline', () => {
    const outbox = make();
    for (let i = 0; i < 50; i += 1) {
      outbox.append('a', `r${i}`, i);
      const [record] = outbox.peek('a', 1);
      clock.advance(100);
      outbox.ack('a', record.seq);
    }
    clock.advance(5000);
    expect(outbox.stats()).toMatchObject({ depth: 0, onDisk: 0, buffered: 0 });
    expect(rowsOnDisk()).toBe(0);
  });

  it('writes a report still unacknowledged at its deadline, at most durableAfterMs after its append', () => {
    const outbox = make();
    outbox.append('a', 'late', 1);
    clock.advance(400);
    outbox.append('a', 'later', 2);
    expect(rowsOnDisk()).toBe(0);
    clock.advance(600);
    // 'late' is due at append + 1000 at the latest; 'later' may still be in memory.
    expect(outbox.stats().onDisk).toBeGreaterThanOrEqual(1);
    clock.advance(400);
    expect(outbox.stats()).toMatchObject({ onDisk: 2, buffered: 0 });
    expect(rowsOnDisk()).toBe(2);
    expect(text(outbox.peek('a', 10))).toEqual(['late', 'later']);
  });

  it('writes every report due in one half-window together', () => {
    const outbox = make();
    const onDisk: number[] = [];
    for (let i = 0; i < 40; i += 1) {
      outbox.append('a', `r${i}`, i);
      clock.advance(25);
      onDisk.push(outbox.stats().onDisk);
    }
    // 40 reports over 1 s: the disk count grows in a few steps, not 40.
    expect(new Set(onDisk).size).toBeLessThanOrEqual(4);
  });

  it('keeps order when disk rows and memory records are acknowledged together', () => {
    const outbox = make();
    for (let i = 0; i < 5; i += 1) outbox.append('a', `d${i}`, i);
    clock.advance(1000);
    for (let i = 0; i < 3; i += 1) outbox.append('a', `m${i}`, 10 + i);
    expect(outbox.stats()).toMatchObject({ onDisk: 5, buffered: 3 });
    const all = outbox.peek('a', 100);
    expect(text(all)).toEqual(['d0', 'd1', 'd2', 'd3', 'd4', 'm0', 'm1', 'm2']);
    expect(outbox.ack('a', all[6].seq)).toBe(7);
    // Acknowledged disk rows are hidden at once and deleted at the next write.
    expect(text(outbox.peek('a', 100))).toEqual(['m2']);
    expect(rowsOnDisk()).toBe(5);
    expect(outbox.stats()).toMatchObject({ depth: 1, onDisk: 0, oldestTs: 12 });
    clock.advance(1000);
    expect(rowsOnDisk()).toBe(1);
  });

  it('keeps what memory holds on close, for the next start', () => {
    const first = make();
    first.append('a', 'kept', 7);
    first.close();
    const second = make();
    expect(text(second.peek('a', 10))).toEqual(['kept']);
    expect(second.peek('a', 10)[0].ts).toBe(7);
  });

  it('a final spill that throws on close still closes the store and reports what memory held as dropped', () => {
    const drops: unknown[] = [];
    const states: unknown[] = [];
    const outbox = make({ onDrop: (info) => drops.push(info), onStorage: (state) => states.push(state) });
    outbox.append('a', 'a1', 1);
    outbox.append('a', 'a22', 2);
    outbox.append('b', 'b1', 3);
    const write = vi.spyOn(OutboxStore.prototype, 'insertWithSeq').mockImplementation(() => { throw new Error('disk I/O error'); });
    const closeStore = vi.spyOn(OutboxStore.prototype, 'close');
    try {
      expect(() => outbox.close()).not.toThrow();
      expect(closeStore).toHaveBeenCalledTimes(1);
      expect(states).toEqual([expect.objectContaining({ state: 'failing', cause: 'disk I/O error', failedWrites: 1 })]);
      expect(drops).toEqual([
        { device: 'a', records: 2, bytes: 5, reason: 'write-failed' },
        { device: 'b', records: 1, bytes: 2, reason: 'write-failed' },
      ]);
      expect(outbox.stats().devices.a?.dropped).toBe(2);
    } finally {
      write.mockRestore();
      closeStore.mockRestore();
    }
    expect(rowsOnDisk()).toBe(0);
  });
});
