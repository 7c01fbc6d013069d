// The outbox file taken up late (a start without it) meets the file's own safeguards, in both
// modes: the file gets its checksums and stored counts, a previous run's file found corrupt when
// it finally opens is salvaged (each readable row delivered, each lost one counted once), the
// in-memory store at start holds reports at their memory cost against the byte cap, and a removed
// device's queue is counted as dropped in the file's counters (kept across a restart).
import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'libsql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MovedAside } from '../../../src/cloud/outbox/outbox-file.js';
import { openOutbox } from '../../../src/cloud/outbox/open-outbox.js';
import type { OutboxMode, OutboxOptions } from '../../../src/cloud/outbox/outbox-options.js';
import type { OutboxDropInfo, ReportOutbox } from '../../../src/core/outbox-types.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { checkpoint, deliverNumbered, numberedPayload, rowMarker, zeroPageHolding } from '../../helpers/outbox-file.js';

let root: string;
let dir: string;
let path: string;
let clock: ManualClock;
const open: ReportOutbox[] = [];

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'outbox-late-damage-'));
  dir = join(root, 'state');
  mkdirSync(dir);
  path = join(dir, 'outbox.sqlite');
  clock = new ManualClock();
});

afterEach(() => {
  for (const outbox of open.splice(0)) outbox.close();
  rmSync(root, { recursive: true, force: true });
});

function make(mode: OutboxMode, extra: Partial<OutboxOptions> = {}) {
  const drops: OutboxDropInfo[] = [];
  const moved: MovedAside[] = [];
  const outbox = openOutbox(mode, { path, durableAfterMs: 1000, storageRetryMs: 1000, time: clock, onDrop: (d) => drops.push(d), onMovedAside: (m) => moved.push(m), ...extra });
  open.push(outbox);
  return { outbox, drops, moved };
}

function closeOf(outbox: ReportOutbox): void {
  outbox.close();
  open.splice(open.indexOf(outbox), 1);
}

const devices = ['a', 'b', 'c'];
const marker = rowMarker;
const payload = numberedPayload;

const deliverAll = (outbox: ReportOutbox) => deliverNumbered(outbox, devices);

function fileFacts(): { unchecked: number; counted: Record<string, { depth: number; dropped: number }> } {
  const db = new Database(path);
  try {
    const unchecked = (db.prepare('SELECT COUNT(*) AS n FROM outbox WHERE crc IS NULL').get() as { n: number }).n;
    const rows = db.prepare('SELECT device, depth, dropped FROM outbox_counts').all() as { device: string; depth: number; dropped: number }[];
    return { unchecked, counted: Object.fromEntries(rows.map((r) => [r.device, { depth: r.depth, dropped: r.dropped }])) };
  } finally {
    db.close();
  }
}

const sum = (drops: OutboxDropInfo[], reason: OutboxDropInfo['reason']) => drops.filter((d) => d.reason === reason).reduce((n, d) => n + d.records, 0);

describe.each(['memory-first', 'write-ahead'] as const)('the outbox file taken up late (%s)', (mode) => {
  it('a previous run\'s file found corrupt when it opens is salvaged: every report delivered or counted once, checksums and counts in the file', () => {
    const previous = make(mode);
    const old = 1500;
    for (let n = 0; n < old; n += 1) previous.outbox.append(devices[n % 3], payload(n), n);
    closeOf(previous.outbox);
    checkpoint(path);
    zeroPageHolding(path, marker(700));
    renameSync(dir, join(root, 'away'));

    const { outbox, drops, moved } = make(mode);
    expect(outbox.stats().storage?.state).toBe('failing');
    const fresh = 30;
    for (let n = old; n < old + fresh; n += 1) outbox.append(devices[n % 3], payload(n), n);
    clock.advance(1500);
    outbox.checkFile?.();
    expect(moved).toEqual([]);
    renameSync(join(root, 'away'), dir);
    outbox.checkFile?.();
    expect(outbox.stats().storage?.state).toBe('ok');
    expect(moved).toEqual([expect.objectContaining({ path, lost: expect.any(Number), salvaged: expect.any(Number) })]);
    const lost = sum(drops, 'file-lost');
    expect(lost).toBeGreaterThan(0);
    expect(lost).toBe(moved[0].lost);
    outbox.flush();
    const facts = fileFacts();
    expect(facts.unchecked).toBe(0);
    expect(Object.values(facts.counted).reduce((n, c) => n + c.dropped, 0)).toBe(lost);

    const delivered = deliverAll(outbox);
    expect(new Set(delivered).size).toBe(delivered.length);
    // Every new report delivered; of the old ones, each either delivered or counted lost.
    for (let n = old; n < old + fresh; n += 1) expect(delivered).toContain(n);
    expect(delivered.length + lost).toBe(old + fresh);
    expect(outbox.stats()).toMatchObject({ depth: 0, dropped: lost });
    closeOf(outbox);
    // The losses are the file's: a restart still shows them.
    expect(make(mode).outbox.stats().dropped).toBe(lost);
  });

  it('the in-memory store at start holds reports at their memory cost against maxBytesTotal; the file counts payloads', () => {
    renameSync(dir, join(root, 'away'));
    const cap = 20_000;
    const overhead = 450;
    const { outbox, drops } = make(mode, { maxBytesTotal: cap, recordOverheadBytes: overhead });
    const size = Buffer.byteLength(payload(0));
    const appended = 200;
    for (let n = 0; n < appended; n += 1) {
      outbox.append(devices[n % 3], payload(n), n);
      if (n % 20 === 19) {
        clock.advance(1100);
        outbox.flush();
      }
    }
    outbox.flush();
    const held = outbox.stats();
    expect(held.bytes).toBeLessThanOrEqual(cap);
    // Held at payload size only, 4 times as many would have fitted.
    expect(held.depth).toBeLessThanOrEqual(Math.floor(cap / (size + overhead)));
    expect(held.depth).toBeGreaterThan(0);
    const capped = sum(drops, 'total-cap');
    expect(capped).toBe(appended - held.depth);
    expect(held.dropped).toBe(capped);

    renameSync(join(root, 'away'), dir);
    outbox.checkFile?.();
    outbox.flush();
    expect(outbox.stats()).toMatchObject({ depth: held.depth, bytes: held.depth * size, dropped: capped, storage: { state: 'ok' } });
    // This run's drops, made before the file opened, are the file's now.
    expect(Object.values(fileFacts().counted).reduce((n, c) => n + c.dropped, 0)).toBe(capped);
  });

  it('a removed device\'s queue, on disk and in memory, is counted as dropped (device-removed) and the file keeps the count', () => {
    const { outbox, drops } = make(mode);
    for (let n = 0; n < 30; n += 1) outbox.append(devices[n % 3], payload(n), n);
    outbox.flush();
    for (let n = 30; n < 36; n += 1) outbox.append(devices[n % 3], payload(n), n);
    // A forwarder read a's first reports without acknowledging them: they are dropped too.
    outbox.peek('a', 3);
    expect(outbox.discard('a')).toBe(12);
    expect(outbox.discard('a')).toBe(0);
    expect(drops.filter((d) => d.reason === 'device-removed')).toEqual([expect.objectContaining({ device: 'a', records: 12 })]);
    expect(outbox.peek('a', 50)).toEqual([]);
    expect(outbox.ack('a', Number.MAX_SAFE_INTEGER)).toBe(0);
    expect(outbox.devicesWithBacklog().sort()).toEqual(['b', 'c']);
    expect(outbox.stats()).toMatchObject({ depth: 24, dropped: 12, devices: { a: { depth: 0, dropped: 12 } } });
    closeOf(outbox);
    const again = make(mode).outbox;
    expect(again.stats()).toMatchObject({ depth: 24, dropped: 12 });
    expect(again.peek('a', 50)).toEqual([]);
    expect(fileFacts().counted.a).toEqual({ depth: 0, dropped: 12 });
  });
});
