// A damaged outbox file at start: moved aside (kept, named once), a fresh file used, the gateway
// polling again instead of a crash loop. The variants are the ones tried on a real gateway
// (bytes overwritten, truncation, a damaged header or first page, garbage, an empty WAL-less file).
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MovedAside } from '../../../src/cloud/outbox/outbox-file.js';
import { openOutbox } from '../../../src/cloud/outbox/open-outbox.js';
import { OutboxStore } from '../../../src/cloud/outbox/outbox-store.js';
import { ManualClock } from '../../helpers/manual-clock.js';

let dir: string;
let path: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'outbox-corrupt-'));
  path = join(dir, 'outbox.sqlite');
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A file of 40 KB of rows, checkpointed and without its -wal/-shm (what a clean stop leaves). */
function filledFile(): void {
  const store = new OutboxStore(path);
  store.transaction(() => {
    for (let i = 0; i < 200; i += 1) store.insertWithSeq({ seq: i + 1, device: i % 2 ? 'a' : 'b', ts: i, payload: Buffer.alloc(200, i) });
  });
  (store as unknown as { db: { pragma(s: string): unknown } }).db.pragma('wal_checkpoint(TRUNCATE)');
  store.close();
  for (const suffix of ['-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
}

function overwrite(offset: number, bytes: Buffer): void {
  const fd = openSync(path, 'r+');
  writeSync(fd, bytes, 0, bytes.length, offset);
  closeSync(fd);
}

const damage: Array<[string, () => void]> = [
  ['bytes overwritten at offset 2048', () => overwrite(2048, Buffer.alloc(512, 0xa5))],
  ['truncated to 2048 bytes', () => truncateSync(path, 2048)],
  ['damaged header (magic string)', () => overwrite(0, Buffer.from('NOT A SQLITE FILE'))],
  ['first page zeroed', () => overwrite(0, Buffer.alloc(1024, 0))],
  ['garbage file', () => writeFileSync(path, Buffer.alloc(8192, 0x5a))],
  ['page size field broken', () => overwrite(16, Buffer.from([0x00, 0x03]))],
];

describe.each(['memory-first', 'write-ahead'] as const)('a corrupt outbox file at start (%s)', (mode) => {
  it.each(damage)('%s: moved aside, named once, a fresh file used', (_what, spoil) => {
    filledFile();
    spoil();
    const original = readFileSync(path);
    const moved: MovedAside[] = [];
    const outbox = openOutbox(mode, { path, time: new ManualClock(), onMovedAside: (m) => moved.push(m) });
    try {
      expect(moved).toHaveLength(1);
      expect(moved[0]).toMatchObject({ path, cause: expect.stringMatching(/SQLITE_(CORRUPT|NOTADB)/) });
      expect(moved[0].movedTo).toMatch(/outbox\.sqlite\.corrupt-\d{4}-\d\d-\d\dT/);
      // Kept for inspection, byte for byte.
      expect(readFileSync(moved[0].movedTo).equals(original)).toBe(true);
      // Every row that can still be read is carried over (the first two variants damage a page or
      // two; the others the header or schema, which loses them all); none was counted before.
      expect(outbox.stats().storage).toMatchObject({ state: 'ok' });
      expect(outbox.stats().depth).toBe(moved[0].salvaged);
      expect(outbox.stats().depth).toBeLessThanOrEqual(200);
      outbox.append('a', 'fresh', 1);
      outbox.flush();
      const a = outbox.peek('a', 1000);
      expect(a.at(-1)?.payload.toString()).toBe('fresh');
      expect(a.length).toBe(outbox.stats().devices.a.depth);
    } finally {
      outbox.close();
    }
    const store = new OutboxStore(path);
    expect(store.integrityCheck()).toEqual(['ok']);
    store.close();
  });

  it('leaves a sound file where it is', () => {
    filledFile();
    const moved: MovedAside[] = [];
    const outbox = openOutbox(mode, { path, time: new ManualClock(), onMovedAside: (m) => moved.push(m) });
    expect(outbox.stats().depth).toBe(200);
    outbox.close();
    expect(moved).toEqual([]);
    expect(readdirSync(dir).filter((f) => f.includes('corrupt'))).toEqual([]);
    expect(existsSync(path)).toBe(true);
  });
});
