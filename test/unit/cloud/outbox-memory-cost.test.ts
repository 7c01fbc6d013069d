// Memory held by an outbox is bounded by what a report really costs there: each report in memory
// counts its payload plus recordOverheadBytes against the caps (a 33-byte report costs ~480 bytes
// resident, not 33), while on disk it counts its payload.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openOutbox } from '../../../src/cloud/outbox/open-outbox.js';
import { DEFAULT_RECORD_OVERHEAD_BYTES } from '../../../src/cloud/outbox/outbox-options.js';
import { OutboxStore } from '../../../src/cloud/outbox/outbox-store.js';
import type { OutboxDropInfo } from '../../../src/core/outbox-types.js';
import { ManualClock } from '../../helpers/manual-clock.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'outbox-cost-'));
});

afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

const report = (i: number) => JSON.stringify({ t: 21.5, p: 1013, n: i % 100_000 }).padEnd(33, ' ');

describe.each(['memory-first', 'write-ahead'] as const)('memory cost per report (%s)', (mode) => {
  it('with the file taking no writes, memory holds at most maxBytes / (payload + overhead) reports; the rest are counted', () => {
    const maxBytes = 100_000;
    const drops: OutboxDropInfo[] = [];
    const clock = new ManualClock();
    const outbox = openOutbox(mode, {
      path: join(dir, 'outbox.db'), time: clock, maxBytesTotal: maxBytes, recordOverheadBytes: DEFAULT_RECORD_OVERHEAD_BYTES,
      flushRecords: 100_000, onDrop: (d) => drops.push(d),
    });
    vi.spyOn(OutboxStore.prototype, 'transaction').mockImplementation(() => {
      throw Object.assign(new Error('attempt to write a readonly database'), { code: 'SQLITE_READONLY' });
    });
    const polled = 5000;
    for (let i = 0; i < polled; i += 1) {
      outbox.append(`d${i % 4}`, report(i), i);
      if (i % 100 === 0) clock.advance(100);
    }
    const stats = outbox.stats();
    const perReport = 33 + DEFAULT_RECORD_OVERHEAD_BYTES;
    expect(stats.bytes).toBeLessThanOrEqual(maxBytes);
    expect(stats.depth).toBeLessThanOrEqual(Math.floor(maxBytes / perReport));
    // Counted at the real cost: the cap is used, not a fifteenth of it.
    expect(stats.depth).toBeGreaterThan(Math.floor(maxBytes / perReport) * 0.9);
    const counted = drops.reduce((n, d) => n + d.records, 0);
    expect(stats.depth + counted).toBe(polled);
    expect(stats.dropped).toBe(counted);
    outbox.close();
  });

  it('on disk a report counts its payload only', () => {
    const outbox = openOutbox(mode, { path: join(dir, 'outbox.db'), time: new ManualClock(), recordOverheadBytes: DEFAULT_RECORD_OVERHEAD_BYTES });
    for (let i = 0; i < 10; i += 1) outbox.append('a', report(i), i);
    outbox.flush();
    expect(outbox.stats()).toMatchObject({ depth: 10, bytes: 330, onDisk: 10 });
    outbox.close();
  });
});
