// Salvage of a long-running file whose tail is damaged (its highest seq unreadable): the blind
// steps over the damage go a bounded way past the last row read, not to an absolute seq (rows
// numbered from 500,001 were thrown away readable). And however far the damage reaches, a salvage
// ends within its time budget (it runs on the event loop). A fake database answers as a damaged
// SQLite file does: lookups inside the damage throw.
import { describe, expect, it } from 'vitest';
import { MAX_BLIND_STEPS, salvageRows } from '../../../src/cloud/outbox/outbox-salvage.js';
import type { SqliteDatabase } from '../../../src/cloud/outbox/sqlite-types.js';

type Row = { seq: number; device: string; ts: number; payload: ArrayBuffer; crc: number | null };

function damagedDb(first: number, last: number, damaged: (seq: number) => boolean, highestReadable = false): SqliteDatabase {
  const row = (seq: number): Row => ({ seq, device: 'a', ts: seq, payload: new TextEncoder().encode(`r${seq}`).buffer as ArrayBuffer, crc: null });
  const corrupt = () => Object.assign(new Error('database disk image is malformed'), { code: 'SQLITE_CORRUPT' });
  const statement = (sql: string) => ({
    run: () => ({ changes: 0, lastInsertRowid: 0 }),
    all: () => [],
    get: (arg?: unknown) => {
      // The highest seq sits in the damaged tail: both ways of reading it fail (unless told otherwise).
      if (sql.includes('sqlite_sequence') || sql.includes('MAX(seq)')) {
        if (highestReadable) return { seq: last };
        throw corrupt();
      }
      const at = Number(arg);
      if (sql.includes('seq > ?')) {
        // A range step reads on from `at`: it fails when the next row's page is damaged.
        const next = Math.max(first, at + 1);
        if (next > last) return undefined;
        if (damaged(next)) throw corrupt();
        return row(next);
      }
      if (at < first || at > last) return undefined;
      if (damaged(at)) throw corrupt();
      return row(at);
    },
  });
  return {
    prepare: statement as SqliteDatabase['prepare'], exec: () => undefined, transaction: ((fn: unknown) => fn) as SqliteDatabase['transaction'], close: () => undefined, inTransaction: false,
    pragma: (source: string) => (source.startsWith('table_info') ? [{ name: 'crc' }] : []),
  };
}

describe('salvage of a damaged tail', () => {
  it('rows numbered from 500,001: the readable rows past the damage are carried over (blind steps relative to the last row read)', () => {
    const salvaged = salvageRows(damagedDb(500_001, 503_000, (seq) => seq > 502_000 && seq <= 502_500));
    expect(salvaged.rows).toHaveLength(2500);
    expect(salvaged.rows.at(-1)?.seq).toBe(503_000);
    expect(salvaged.unreadableSeqs).toBe(500);
    expect(salvaged.complete).toBe(false);
  });

  it('hostile: damage wider than the blind steps stops there, counted, not at an absolute seq', () => {
    const salvaged = salvageRows(damagedDb(500_001, 520_000, (seq) => seq > 501_000 && seq <= 501_000 + MAX_BLIND_STEPS + 10));
    expect(salvaged.rows).toHaveLength(1000);
    expect(salvaged.unreadableSeqs).toBe(MAX_BLIND_STEPS);
  });

  it('hostile: a salvage stops at its time budget however far the damage reaches', () => {
    const start = performance.now();
    // Every seq past the first thousand is damaged, up to 10 million: stepping it all would take minutes.
    const salvaged = salvageRows(damagedDb(1, 10_000_000, (seq) => seq > 1000 && seq < 10_000_000, true), 200);
    expect(performance.now() - start).toBeLessThan(2000);
    expect(salvaged.rows.length).toBeGreaterThanOrEqual(1000);
    expect(salvaged).toMatchObject({ complete: false, outOfTime: true });
  });
});
