// A checksum per record (CRC-32 of payload and sample time, stored in its row), checked before a
// record is handed out: damage inside a payload that SQLite's own checks pass (here bytes of an
// overflow page flipped in the real file) is counted and never published. Rows from before
// checksums (no column, or NULL) are accepted as they are.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'libsql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openOutbox } from '../../../src/cloud/outbox/open-outbox.js';
import { OutboxStore } from '../../../src/cloud/outbox/outbox-store.js';
import type { OutboxDropInfo } from '../../../src/core/outbox-types.js';
import { ManualClock } from '../../helpers/manual-clock.js';

let dir: string;
let path: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'outbox-crc-'));
  path = join(dir, 'outbox.sqlite');
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

const marker = (i: number) => `REC-${String(i).padStart(4, '0')}-`;
/** A large JSON report (3 KB of its own marker: it spills to overflow pages at the 1 KiB page size). */
const report = (i: number) => JSON.stringify({ n: i, pad: marker(i).repeat(330) });

function payloadOf(seq: number): string {
  const db = new Database(path);
  try {
    return Buffer.from((db.prepare('SELECT payload FROM outbox WHERE seq = ?').get(seq) as { payload: ArrayBuffer }).payload).toString();
  } finally {
    db.close();
  }
}

/**
 * Flips one byte of record i's payload in the file itself (the WAL checkpointed into it first):
 * the first of its marker's places (pages keep stale copies in their free space) where the flip
 * changes what SQLite reads back for that record, and nothing else.
 */
function spoilPayload(i: number, seq: number): void {
  payloadOf(seq);
  const db = new Database(path);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  const original = readFileSync(path);
  for (let at = original.indexOf(marker(i)); at >= 0; at = original.indexOf(marker(i), at + 1)) {
    const bytes = Buffer.from(original);
    bytes[at + 2] ^= 0x20;
    writeFileSync(path, bytes);
    if (payloadOf(seq) !== report(i)) return;
  }
  writeFileSync(path, original);
  throw new Error(`no byte of record ${i} found in the file`);
}

describe.each(['memory-first', 'write-ahead'] as const)('record checksums (%s)', (mode) => {
  it('a payload damaged in the file passes quick_check and integrity_check, but is counted and never handed out', () => {
    const polled = 20;
    const first = openOutbox(mode, { path, time: new ManualClock() });
    for (let i = 0; i < polled; i += 1) first.append('a', report(i), 1000 + i);
    first.close();
    // One device, appended in order from a fresh file: record i has seq i + 1.
    spoilPayload(7, 8);
    spoilPayload(13, 14);
    const store = new OutboxStore(path);
    expect(store.quickCheck()).toEqual(['ok']);
    expect(store.integrityCheck()).toEqual(['ok']);
    store.close();

    const drops: OutboxDropInfo[] = [];
    const outbox = openOutbox(mode, { path, time: new ManualClock(), onDrop: (d) => drops.push(d) });
    // Small reads: the rejected rows are skipped without a short answer that ends the backlog early.
    const delivered: number[] = [];
    let after = 0;
    for (;;) {
      const batch = outbox.peek('a', 3, after);
      if (batch.length === 0) break;
      for (const record of batch) delivered.push((JSON.parse(record.payload.toString()) as { n: number }).n);
      after = batch[batch.length - 1].seq;
    }
    expect(delivered).toEqual(Array.from({ length: polled }, (_, i) => i).filter((i) => i !== 7 && i !== 13));
    expect(drops).toEqual([
      { device: 'a', records: 1, bytes: report(7).length, reason: 'checksum', seq: expect.any(Number) },
      { device: 'a', records: 1, bytes: report(13).length, reason: 'checksum', seq: expect.any(Number) },
    ]);
    expect(outbox.stats()).toMatchObject({ depth: 18, dropped: 2 });
    // Read again: the rejected rows are not counted twice.
    outbox.peek('a', 100);
    expect(drops).toHaveLength(2);
    expect(outbox.ack('a', after)).toBe(18);
    outbox.flush();
    expect(outbox.stats()).toMatchObject({ depth: 0, dropped: 2 });
    outbox.close();
    // delivered + counted = polled, and nothing is left to be found again.
    expect(delivered.length + drops.length).toBe(polled);
    const again = openOutbox(mode, { path, time: new ManualClock(), onDrop: (d) => drops.push(d) });
    expect(again.peek('a', 100)).toEqual([]);
    expect(drops).toHaveLength(2);
    again.close();
  });

  it('accepts rows of a file from before checksums and checks the ones written after', () => {
    const old = new Database(path);
    old.exec('CREATE TABLE outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, device TEXT NOT NULL, ts INTEGER NOT NULL, payload BLOB NOT NULL)');
    const insert = old.prepare('INSERT INTO outbox (seq, device, ts, payload) VALUES (?, ?, ?, ?)');
    for (let i = 1; i <= 3; i += 1) insert.run(i, 'a', i, Buffer.from(`old${i}`));
    old.close();
    const outbox = openOutbox(mode, { path, time: new ManualClock() });
    outbox.append('a', 'new4', 4);
    outbox.flush();
    expect(outbox.peek('a', 10).map((r) => r.payload.toString())).toEqual(['old1', 'old2', 'old3', 'new4']);
    outbox.close();
    const check = new Database(path);
    expect(check.prepare('SELECT seq, crc IS NOT NULL AS checked FROM outbox ORDER BY seq').all()).toEqual([
      { seq: 1, checked: 0 }, { seq: 2, checked: 0 }, { seq: 3, checked: 0 }, { seq: 4, checked: 1 },
    ]);
    check.close();
  });
});
