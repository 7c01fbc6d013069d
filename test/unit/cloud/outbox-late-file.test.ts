// Both outbox modes started where the file cannot be opened (its directory gone, as on a state
// directory that cannot be created): they serve and acknowledge from memory, say storage failing
// once, and take the file up when it can be opened: the previous run's rows renumbered after
// everything already read (none skipped, none acknowledged unsent), memory moved in, and a stop
// before that counts what memory held as dropped.
import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openOutbox } from '../../../src/cloud/outbox/open-outbox.js';
import type { OutboxMode } from '../../../src/cloud/outbox/outbox-options.js';
import type { OutboxDropInfo, OutboxStorageState, ReportOutbox } from '../../../src/core/outbox-types.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { rowsIn } from '../../helpers/outbox-file.js';

let root: string;
let clock: ManualClock;
const open: ReportOutbox[] = [];

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'outbox-late-'));
  clock = new ManualClock();
});

afterEach(() => {
  for (const outbox of open.splice(0)) outbox.close();
  rmSync(root, { recursive: true, force: true });
});

function make(mode: OutboxMode, path: string) {
  const states: OutboxStorageState[] = [];
  const drops: OutboxDropInfo[] = [];
  const commits: string[][] = [];
  const takenUp: number[] = [];
  const outbox = openOutbox(mode, {
    path, flushIntervalMs: 50, durableAfterMs: 1000, storageRetryMs: 1000, time: clock,
    onStorage: (s) => states.push(s), onDrop: (d) => drops.push(d), onCommit: (devices) => commits.push([...devices]),
    // What the gateway drops then (devices no longer in the site) must already be queued.
    onFileAttached: () => takenUp.push(outbox.stats().depth),
  });
  open.push(outbox);
  return { outbox, states, drops, commits, takenUp };
}

const text = (records: { payload: Buffer }[]) => records.map((r) => r.payload.toString());

/** A forwarder's way of reading: after the last seq it read, acknowledging what it read. */
function deliverAll(outbox: ReportOutbox, device: string, cursor: { seq: number }): string[] {
  const got: string[] = [];
  for (;;) {
    const batch = outbox.peek(device, 7, cursor.seq);
    if (batch.length === 0) return got;
    got.push(...text(batch));
    cursor.seq = batch.at(-1)!.seq;
    outbox.ack(device, cursor.seq);
  }
}

describe.each(['memory-first', 'write-ahead'] as const)('outbox started without its file: %s', (mode) => {
  it('serves from memory, then takes the file up with the old rows after everything already read; nothing skipped or counted twice', async () => {
    const dir = join(root, 'state');
    mkdirSync(dir);
    const path = join(dir, 'outbox.db');
    // The previous run left 5 rows per device.
    const previous = make(mode, path);
    for (let i = 0; i < 5; i += 1) for (const d of ['a', 'b']) previous.outbox.append(d, `old-${d}${i}`, clock.now());
    previous.outbox.close();
    open.splice(open.indexOf(previous.outbox), 1);
    expect(rowsIn(path)).toBe(10);
    renameSync(dir, join(root, 'away'));

    const { outbox, states, drops, commits, takenUp } = make(mode, path);
    expect(states).toEqual([expect.objectContaining({ state: 'failing', cause: expect.stringMatching(/ENOENT/) })]);
    const cursors = { a: { seq: 0 }, b: { seq: 0 } };
    for (let i = 0; i < 3; i += 1) outbox.append('a', `new-a${i}`, clock.now());
    outbox.append('b', 'new-b0', clock.now());
    clock.advance(1500);
    // Delivered from memory while no file exists; a's first two acknowledged, b's read only.
    expect(deliverAll(outbox, 'a', cursors.a)).toEqual(['new-a0', 'new-a1', 'new-a2']);
    const bRead = outbox.peek('b', 10, 0);
    expect(text(bRead)).toEqual(['new-b0']);
    cursors.b.seq = bRead[0].seq;
    outbox.append('a', 'new-a3', clock.now());
    outbox.checkFile?.();
    expect(outbox.stats().storage?.state).toBe('failing');

    expect(takenUp).toEqual([]);
    renameSync(join(root, 'away'), dir);
    outbox.checkFile?.();
    expect(states.map((s) => s.state)).toEqual(['failing', 'ok']);
    expect(outbox.stats()).toMatchObject({ depth: 12, storage: { state: 'ok' } });
    // Once, with the old rows counted in.
    outbox.checkFile?.();
    expect(takenUp).toEqual([12]);
    await Promise.resolve();
    expect(commits.flat()).toEqual(expect.arrayContaining(['a', 'b']));
    // The forwarder goes on from its cursor: memory's new-a3 first, then the old rows; b's new-b0 is still unacknowledged.
    expect(deliverAll(outbox, 'a', cursors.a)).toEqual(['new-a3', 'old-a0', 'old-a1', 'old-a2', 'old-a3', 'old-a4']);
    expect(deliverAll(outbox, 'b', cursors.b)).toEqual(['old-b0', 'old-b1', 'old-b2', 'old-b3', 'old-b4']);
    expect(text(outbox.peek('b', 10, 0))).toEqual([]);
    // New appends follow every renumbered row.
    outbox.append('a', 'after', clock.now());
    outbox.flush();
    expect(deliverAll(outbox, 'a', cursors.a)).toEqual(['after']);
    outbox.flush();
    expect(outbox.stats()).toMatchObject({ depth: 0, dropped: 0 });
    expect(drops).toEqual([]);
    expect(rowsIn(path)).toBe(0);
  });

  it('a stop before the file could be opened counts what memory held as dropped (write-failed)', () => {
    const path = join(root, 'missing', 'outbox.db');
    const { outbox, drops } = make(mode, path);
    for (let i = 0; i < 4; i += 1) outbox.append('a', `r${i}`, clock.now());
    outbox.append('b', 'r0', clock.now());
    clock.advance(1500);
    outbox.ack('a', outbox.peek('a', 1)[0].seq);
    outbox.close();
    open.splice(open.indexOf(outbox), 1);
    const lost = Object.fromEntries(drops.map((d) => [d.device, d.records]));
    expect(drops.every((d) => d.reason === 'write-failed')).toBe(true);
    expect(lost).toEqual({ a: 3, b: 1 });
    expect(outbox.stats().dropped).toBe(4);
  });

  it('a file that opens but takes no writes yet (attach rolled back) keeps everything and tries again', () => {
    const dir = join(root, 'state');
    const path = join(dir, 'outbox.db');
    const { outbox, states } = make(mode, path);
    for (let i = 0; i < 3; i += 1) outbox.append('a', `r${i}`, clock.now());
    clock.advance(1500);
    // A directory where the file should be: opening it fails every time (as on a read-only mount).
    mkdirSync(path, { recursive: true });
    outbox.checkFile?.();
    outbox.checkFile?.();
    expect(states.map((s) => s.state)).toEqual(['failing']);
    expect(outbox.stats().depth).toBe(3);
    rmSync(path, { recursive: true });
    outbox.checkFile?.();
    expect(states.map((s) => s.state)).toEqual(['failing', 'ok']);
    expect(text(outbox.peek('a', 10))).toEqual(['r0', 'r1', 'r2']);
    expect(rowsIn(path)).toBe(3);
  });
});
