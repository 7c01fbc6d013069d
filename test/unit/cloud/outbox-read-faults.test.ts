// Read errors of the outbox file as SQLite gives them after EIO (measured under a FUSE layer,
// test/system/storage-read-faults.test.ts): an error, or rows that are not what was asked for.
// The injection seam is the store's own read (OutboxStore.after); the file itself is real.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryFirstOutbox } from '../../../src/cloud/outbox/memory-first-outbox.js';
import { Outbox } from '../../../src/cloud/outbox/outbox.js';
import { MAX_READ_RETRY_MS } from '../../../src/cloud/outbox/outbox-reads.js';
import { OutboxStore } from '../../../src/cloud/outbox/outbox-store.js';
import type { OutboxReadState, OutboxStorageState } from '../../../src/core/outbox-types.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { rowsIn } from '../../helpers/outbox-file.js';

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'outbox-read-faults-'));
  path = join(dir, 'outbox.sqlite');
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

const corrupt = () => Object.assign(new Error('database disk image is malformed'), { code: 'SQLITE_CORRUPT' });

/** An outbox with `perDevice` rows on disk for devices a and b. */
function withBacklog(clock: ManualClock, reads: string[], perDevice = 20): MemoryFirstOutbox {
  const outbox = new MemoryFirstOutbox({ path, time: clock, storageRetryMs: 1000, onReads: (s: OutboxReadState) => reads.push(s.state) });
  for (let i = 0; i < perDevice; i += 1) for (const device of ['a', 'b']) outbox.append(device, `${device}-${i}`, i);
  outbox.flush();
  return outbox;
}

describe('outbox reads failing (memory-first, a real file)', () => {
  it('one device\'s rows unreadable while another\'s read well: "failing" once, "back" once, when that device reads again', () => {
    const clock = new ManualClock();
    const reads: string[] = [];
    const outbox = withBacklog(clock, reads);
    const original = OutboxStore.prototype.after;
    const spy = vi.spyOn(OutboxStore.prototype, 'after').mockImplementation(function (this: OutboxStore, device, afterSeq, limit) {
      if (device === 'a') throw corrupt();
      return original.call(this, device, afterSeq, limit);
    });
    try {
      expect(outbox.peek('a', 5)).toEqual([]);
      for (let i = 0; i < 5; i += 1) expect(outbox.peek('b', 5)).toHaveLength(5);
      expect(reads).toEqual(['failing']);
      spy.mockRestore();
      clock.advance(1000);
      expect(outbox.peek('a', 5).map((r) => r.payload.toString())).toEqual(['a-0', 'a-1', 'a-2', 'a-3', 'a-4']);
      expect(reads).toEqual(['failing', 'ok']);
    } finally {
      outbox.close();
    }
  });

  it('a device woken by new reports does not read again before its retry (backoff holds)', () => {
    const clock = new ManualClock();
    const outbox = withBacklog(clock, []);
    const spy = vi.spyOn(OutboxStore.prototype, 'after').mockImplementation(() => {
      throw corrupt();
    });
    try {
      expect(outbox.peek('a', 5)).toEqual([]);
      const calls = spy.mock.calls.length;
      for (let i = 0; i < 10; i += 1) {
        outbox.append('a', `new-${i}`, 100 + i);
        expect(outbox.peek('a', 5)).toEqual([]);
      }
      expect(spy.mock.calls.length).toBe(calls);
    } finally {
      spy.mockRestore();
      outbox.close();
    }
  });

  it('hostile: rows out of seq order (a connection that met EIO answering from pages it never read) are never handed out, and the read is retried', () => {
    const clock = new ManualClock();
    const reads: string[] = [];
    const outbox = withBacklog(clock, reads);
    const original = OutboxStore.prototype.after;
    const spy = vi.spyOn(OutboxStore.prototype, 'after').mockImplementationOnce(function (this: OutboxStore, device, afterSeq, limit) {
      const rows = original.call(this, device, afterSeq, limit);
      // Seq 101..143 then 7, as measured: the tail from an older page.
      return [...rows.slice(2), rows[0]];
    });
    try {
      expect(outbox.peek('a', 5)).toEqual([]);
      expect(reads).toEqual(['failing']);
      spy.mockRestore();
      clock.advance(1000);
      expect(outbox.peek('a', 5).map((r) => r.payload.toString())).toEqual(['a-0', 'a-1', 'a-2', 'a-3', 'a-4']);
      expect(reads).toEqual(['failing', 'ok']);
    } finally {
      outbox.close();
    }
  });

  it('nothing is written to the file while its reads fail (a transaction may write back pages it never read); written once they are back', () => {
    const clock = new ManualClock();
    const outbox = withBacklog(clock, []);
    const spy = vi.spyOn(OutboxStore.prototype, 'after').mockImplementation(() => {
      throw corrupt();
    });
    try {
      expect(outbox.peek('a', 5)).toEqual([]);
      for (let i = 0; i < 10; i += 1) outbox.append('b', `held-${i}`, 200 + i);
      clock.advance(5000);
      expect(rowsIn(path)).toBe(40);
      expect(outbox.stats()).toMatchObject({ onDisk: 40, buffered: 10 });
      spy.mockRestore();
      clock.advance(30_000);
      expect(outbox.peek('a', 5)).toHaveLength(5);
      clock.advance(2000);
      expect(rowsIn(path)).toBe(50);
    } finally {
      outbox.close();
    }
  });

  it('hostile: an ack whose count says more rows than the device holds counts nothing down', () => {
    const clock = new ManualClock();
    const outbox = withBacklog(clock, []);
    try {
      const batch = outbox.peek('a', 5);
      vi.spyOn(OutboxStore.prototype, 'measure').mockReturnValueOnce({ records: 5000, bytes: 50_000 });
      outbox.ack('a', batch.at(-1)?.seq ?? 0);
      expect(outbox.stats().devices.a).toMatchObject({ depth: 20 });
      expect(outbox.stats().onDisk).toBeGreaterThanOrEqual(0);
    } finally {
      outbox.close();
    }
  });
});

describe('outbox reads failing (write-ahead, a real file): storage said once each way', () => {
  it('commits failing and going through by turns while reads fail: "storage failing" once, "back" once, after the reads are back; nothing lost', () => {
    const clock = new ManualClock();
    const storage: string[] = [];
    const reads: string[] = [];
    const outbox = new Outbox({ path, time: clock, storageRetryMs: 1000, onStorage: (s: OutboxStorageState) => storage.push(s.state), onReads: (s: OutboxReadState) => reads.push(s.state) });
    for (let i = 0; i < 20; i += 1) outbox.append('a', `a-${i}`, i);
    outbox.flush();
    const failedRead = vi.spyOn(OutboxStore.prototype, 'after').mockImplementation(() => {
      throw corrupt();
    });
    // Each commit touches other pages: one in two meets the unreadable ones.
    const original = OutboxStore.prototype.transaction;
    let turn = 0;
    const byTurns = vi.spyOn(OutboxStore.prototype, 'transaction').mockImplementation(function <T>(this: OutboxStore, work: () => T): T {
      turn += 1;
      if (turn % 2 === 1) throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_READ' });
      return original.call(this, work) as T;
    });
    try {
      expect(outbox.peek('a', 5)).toEqual([]);
      for (let i = 0; i < 40; i += 1) {
        outbox.append('b', `b-${i}`, 100 + i);
        clock.advance(300);
      }
      expect(turn, 'commits were tried').toBeGreaterThan(6);
      expect(storage).toEqual(['failing']);
      failedRead.mockRestore();
      byTurns.mockRestore();
      clock.advance(MAX_READ_RETRY_MS);
      expect(outbox.peek('a', 50).map((r) => r.payload.toString())).toEqual(Array.from({ length: 20 }, (_, i) => `a-${i}`));
      clock.advance(2000);
      expect(reads).toEqual(['failing', 'ok']);
      expect(storage).toEqual(['failing', 'ok']);
      expect(outbox.stats()).toMatchObject({ depth: 60, dropped: 0 });
    } finally {
      outbox.close();
    }
  });
});
