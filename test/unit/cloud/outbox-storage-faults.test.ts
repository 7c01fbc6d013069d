// Storage faults of both outbox modes, injected at the adapter boundary (OutboxStore's transaction
// throws SQLite's own error object) and, for the disk-full case, caused for real with SQLite's
// max_page_count: the outbox keeps serving and acknowledging from memory, reports one transition
// each way with the real cause, retries on its own timer (not per append), holds memory to its
// cap with fair, counted drops, recovers by itself, and never throws from flush or close.
import { existsSync, mkdtempSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openOutbox } from '../../../src/cloud/outbox/open-outbox.js';
import { OutboxStore } from '../../../src/cloud/outbox/outbox-store.js';
import type { OutboxMode, OutboxOptions } from '../../../src/cloud/outbox/outbox-options.js';
import type { OutboxDropInfo, OutboxStorageState, ReportOutbox } from '../../../src/core/outbox-types.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { integrityOf, rowsIn } from '../../helpers/outbox-file.js';

let dir: string;
let clock: ManualClock;
const open: ReportOutbox[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'outbox-faults-'));
  clock = new ManualClock();
});

afterEach(() => {
  vi.restoreAllMocks();
  for (const outbox of open.splice(0)) outbox.close();
  rmSync(dir, { recursive: true, force: true });
});

function sqliteError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

interface Harness {
  outbox: ReportOutbox;
  states: OutboxStorageState[];
  drops: OutboxDropInfo[];
}

function make(mode: OutboxMode, options: Partial<OutboxOptions> = {}): Harness {
  const states: OutboxStorageState[] = [];
  const drops: OutboxDropInfo[] = [];
  const outbox = openOutbox(mode, {
    path: join(dir, 'outbox.db'), flushIntervalMs: 50, durableAfterMs: 1000, storageRetryMs: 1000, time: clock,
    onStorage: (s) => states.push(s), onDrop: (d) => drops.push(d), ...options,
  });
  open.push(outbox);
  return { outbox, states, drops };
}

/** Every write transaction fails like a full disk until the returned function is called. */
function failWrites(code = 'SQLITE_FULL', message = 'database or disk is full'): { attempts: () => number; heal: () => void } {
  let attempts = 0;
  const original = OutboxStore.prototype.transaction;
  const spy = vi.spyOn(OutboxStore.prototype, 'transaction').mockImplementation(function (this: OutboxStore) {
    attempts += 1;
    throw sqliteError(code, message);
  });
  return { attempts: () => attempts, heal: () => { spy.mockRestore(); expect(OutboxStore.prototype.transaction).toBe(original); } };
}

const rowsOnDisk = () => rowsIn(join(dir, 'outbox.db'));

const text = (records: { payload: Buffer }[]) => records.map((r) => r.payload.toString());

describe.each(['memory-first', 'write-ahead'] as const)('storage faults: %s', (mode) => {
  it('one transition each way with the real cause, retries on its timer only, and recovers by itself', () => {
    const { outbox, states } = make(mode);
    const disk = failWrites();
    // 200 appends over 10 s (a device at 20 reports/s): a retry per second, not one per append.
    for (let i = 0; i < 200; i += 1) {
      outbox.append('pump', `r${i}`, clock.now());
      clock.advance(50);
    }
    expect(states).toEqual([expect.objectContaining({ state: 'failing', cause: 'SQLITE_FULL: database or disk is full' })]);
    expect(outbox.stats().storage).toMatchObject({ state: 'failing', cause: 'SQLITE_FULL: database or disk is full' });
    expect(disk.attempts()).toBeGreaterThanOrEqual(5);
    expect(disk.attempts()).toBeLessThanOrEqual(12);
    disk.heal();
    clock.advance(1000);
    expect(states.map((s) => s.state)).toEqual(['failing', 'ok']);
    expect(states[1].failedWrites).toBe(disk.attempts());
    outbox.flush();
    expect(outbox.stats()).toMatchObject({ depth: 200, dropped: 0, storage: { state: 'ok' } });
    expect(rowsOnDisk()).toBe(200);
    expect(integrityOf(join(dir, 'outbox.db'))).toEqual(['ok']);
  });

  it('flush and close never throw while the file takes no writes; what could not be saved is counted', () => {
    const { outbox, drops } = make(mode);
    outbox.append('a', 'a1', 1);
    outbox.append('b', 'b22', 2);
    failWrites('SQLITE_IOERR_WRITE', 'disk I/O error');
    expect(() => outbox.flush()).not.toThrow();
    expect(() => outbox.close()).not.toThrow();
    expect(drops).toEqual([
      { device: 'a', records: 1, bytes: 2, reason: 'write-failed' },
      { device: 'b', records: 1, bytes: 3, reason: 'write-failed' },
    ]);
  });

  it('keeps memory within the total cap while failing, dropping fairly and counting per device', () => {
    const { outbox, drops } = make(mode, { maxBytesTotal: 1000, flushRecords: 10_000 });
    failWrites();
    // A slow device (1 report per 10) and a fast one, 10-byte reports: 2,200 bytes for 1,000.
    for (let i = 0; i < 200; i += 1) {
      if (i === 1) clock.advance(100);
      if (i % 10 === 0) outbox.append('slow', `slow-${String(i).padStart(5, '0')}`, i);
      outbox.append('fast', `fast-${String(i).padStart(5, '0')}`, i);
    }
    const stats = outbox.stats();
    expect(stats.devices.slow?.dropped ?? 0).toBe(0);
    const held = mode === 'memory-first' ? stats.bytes : stats.buffered * 10;
    expect(held).toBeLessThanOrEqual(1000);
    const dropped = drops.reduce((n, d) => n + d.records, 0);
    expect(stats.devices.fast?.dropped).toBe(dropped);
    // Every report is held or counted as dropped: none unexplained.
    const heldReports = mode === 'memory-first' ? stats.depth : stats.buffered;
    expect(heldReports + dropped).toBe(220);
  });
});

describe.each(['memory-first', 'write-ahead'] as const)('storage faults: %s delivery', (mode) => {
  it('delivers and acknowledges from memory while the disk is full; acked records leave memory', () => {
    const { outbox } = make(mode);
    outbox.append('pump', 'on-disk', 1);
    outbox.flush();
    const disk = failWrites();
    for (let i = 0; i < 5; i += 1) outbox.append('pump', `m${i}`, 10 + i);
    clock.advance(3000);
    const records = outbox.peek('pump', 100);
    expect(text(records)).toEqual(['on-disk', 'm0', 'm1', 'm2', 'm3', 'm4']);
    expect(outbox.ack('pump', records[3].seq)).toBe(4);
    expect(outbox.stats()).toMatchObject({ depth: 2, onDisk: 0, buffered: 2 });
    expect(text(outbox.peek('pump', 100))).toEqual(['m3', 'm4']);
    disk.heal();
    clock.advance(1000);
    expect(outbox.stats().storage?.state).toBe('ok');
    expect(rowsOnDisk()).toBe(2);
  });
});

describe('storage faults: write-ahead delivery', () => {
  it('acks while deletes fail are counted at once and applied at the next commit', () => {
    const { outbox } = make('write-ahead');
    for (let i = 0; i < 4; i += 1) outbox.append('pump', `r${i}`, i);
    outbox.flush();
    const records = outbox.peek('pump', 10);
    const disk = failWrites();
    expect(outbox.ack('pump', records[1].seq)).toBe(2);
    expect(text(outbox.peek('pump', 10))).toEqual(['r2', 'r3']);
    expect(outbox.stats()).toMatchObject({ depth: 2, storage: { state: 'failing' } });
    disk.heal();
    // An ack after the disk is back, before the deferred deletes ran: counted once, not twice.
    expect(outbox.ack('pump', records[2].seq)).toBe(1);
    expect(outbox.stats()).toMatchObject({ depth: 1, onDisk: 1 });
    clock.advance(1000);
    expect(outbox.stats()).toMatchObject({ depth: 1, storage: { state: 'ok' } });
    expect(rowsOnDisk()).toBe(1);
    expect(text(outbox.peek('pump', 10))).toEqual(['r3']);
  });
});

describe('a real SQLITE_FULL (max_page_count)', () => {
  it('surfaces as SQLITE_FULL, not as "cannot rollback - no transaction is active"', () => {
    const store = new OutboxStore(join(dir, 'full.db'));
    (store as unknown as { db: { pragma(s: string): unknown } }).db.pragma('max_page_count = 12');
    const payload = Buffer.alloc(400, 1);
    let error: unknown;
    try {
      for (let i = 0; i < 100; i += 1) store.transaction(() => { for (let j = 0; j < 10; j += 1) store.insertWithSeq({ seq: i * 10 + j + 1, device: 'd', ts: i, payload }); });
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({ code: 'SQLITE_FULL' });
    // Still usable, and sound.
    expect(store.integrityCheck()).toEqual(['ok']);
    expect(store.totals()[0].depth % 10).toBe(0);
    store.close();
  });
});

describe('the file deleted while running', () => {
  it.each(['memory-first', 'write-ahead'] as const)('%s: a fresh file with every row, two transitions, nothing lost', (mode) => {
    const { outbox, states } = make(mode);
    for (let i = 0; i < 5; i += 1) outbox.append('pump', `r${i}`, i);
    outbox.flush();
    unlinkSync(join(dir, 'outbox.db'));
    outbox.checkFile?.();
    expect(states.map((s) => s.state)).toEqual(['failing', 'ok']);
    expect(states[0].cause).toMatch(/deleted or replaced while open/);
    expect(existsSync(join(dir, 'outbox.db'))).toBe(true);
    expect(rowsOnDisk()).toBe(5);
    outbox.append('pump', 'after', 9);
    outbox.flush();
    expect(text(outbox.peek('pump', 10))).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'after']);
    const seqs = outbox.peek('pump', 10).map((r) => r.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(6);
    outbox.checkFile?.();
    expect(states).toHaveLength(2);
    expect(readdirSync(dir).filter((f) => f.includes('corrupt'))).toEqual([]);
  });
});

describe('an error SQLite calls corruption on a sound file (a transient I/O error)', () => {
  it.each(['memory-first', 'write-ahead'] as const)('%s: the file is checked afresh and kept: nothing moved aside, nothing lost', (mode) => {
    const moved: string[] = [];
    const { outbox, states } = make(mode, { onMovedAside: (m) => moved.push(m.movedTo) });
    for (let i = 0; i < 3; i += 1) outbox.append('pump', `r${i}`, i);
    outbox.flush();
    const disk = failWrites('SQLITE_CORRUPT', 'database disk image is malformed');
    outbox.append('pump', 'r3', 3);
    clock.advance(1000);
    expect(states.map((s) => s.state)).toEqual(['failing']);
    disk.heal();
    clock.advance(1000);
    expect(moved).toEqual([]);
    expect(readdirSync(dir).filter((f) => f.includes('corrupt'))).toEqual([]);
    expect(states.map((s) => s.state)).toEqual(['failing', 'ok']);
    outbox.flush();
    expect(text(outbox.peek('pump', 10))).toEqual(['r0', 'r1', 'r2', 'r3']);
    expect(outbox.stats()).toMatchObject({ depth: 4, dropped: 0 });
    expect(rowsOnDisk()).toBe(4);
  });
});

describe('the storage probe', () => {
  const pragma = (store: OutboxStore, text: string) => (store as unknown as { db: { pragma(s: string): unknown } }).db.pragma(text);

  it('is a real write that leaves nothing behind', () => {
    const store = new OutboxStore(join(dir, 'probe.db'));
    try {
      store.probeWrite();
      store.probeWrite();
      expect(store.totals()).toEqual([]);
      expect(store.integrityCheck()).toEqual(['ok']);
    } finally {
      store.close();
    }
  });

  it('needs space like a small commit: on a file that cannot grow it fails with SQLITE_FULL', () => {
    const store = new OutboxStore(join(dir, 'probe-full.db'));
    try {
      const pages = pragma(store, 'page_count') as { page_count: number }[];
      pragma(store, `max_page_count = ${pages[0].page_count}`);
      expect(() => store.probeWrite()).toThrow(expect.objectContaining({ code: 'SQLITE_FULL' }));
      expect(store.integrityCheck()).toEqual(['ok']);
    } finally {
      store.close();
    }
  });
});
