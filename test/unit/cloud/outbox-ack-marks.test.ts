// Rows acknowledged while the file took no deletes (the delete reads pages a failing card cannot
// give), then a stop: the outbox stores how far each device was acknowledged beside its counts (a
// small write the file still takes), so the next start neither sends those rows again nor, when it
// salvages a damaged file, takes them for unsent ones and counts too few lost. Every report is
// then delivered once, or counted, or still queued: nothing in between.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openOutbox } from '../../../src/cloud/outbox/open-outbox.js';
import { OutboxStore } from '../../../src/cloud/outbox/outbox-store.js';
import type { OutboxMode } from '../../../src/cloud/outbox/outbox-options.js';
import type { OutboxDropInfo } from '../../../src/core/outbox-types.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { checkpoint, deliverNumbered, numberedPayload, numberOfPayload, rowMarker, zeroPageHolding } from '../../helpers/outbox-file.js';

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'outbox-ack-marks-'));
  path = join(dir, 'outbox.sqlite');
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

const ROWS = 300;
const SENT = 120;

/** 300 numbered reports on disk; the first 120 delivered and acknowledged while deletes fail; stopped. Returns what was delivered. */
function stopWithAckedRows(mode: OutboxMode): number[] {
  const clock = new ManualClock();
  const outbox = openOutbox(mode, { path, time: clock, storageRetryMs: 1000 });
  for (let n = 1; n <= ROWS; n += 1) outbox.append('a', numberedPayload(n), n);
  outbox.flush();
  // The delete fails as on a card that cannot read the pages it must change; a small write of the counts still goes through.
  vi.spyOn(OutboxStore.prototype, 'deleteThrough').mockImplementation(() => {
    throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_READ' });
  });
  const delivered: number[] = [];
  let after = 0;
  while (delivered.length < SENT) {
    const batch = outbox.peek('a', 30, after);
    delivered.push(...batch.map((r) => numberOfPayload(r.payload)));
    after = batch.at(-1)?.seq ?? after;
    outbox.ack('a', after);
    clock.advance(1500);
  }
  outbox.close();
  vi.restoreAllMocks();
  return delivered;
}

describe.each(['memory-first', 'write-ahead'] as const)('rows acknowledged but not deleted before a stop (%s)', (mode) => {
  it('the next start does not send them again: depth and delivery start after them, and the first write deletes them', () => {
    const sent = stopWithAckedRows(mode);
    const outbox = openOutbox(mode, { path, time: new ManualClock() });
    try {
      expect(outbox.stats().depth).toBe(ROWS - SENT);
      const rest = deliverNumbered(outbox, ['a']);
      expect(rest).toEqual(Array.from({ length: ROWS - SENT }, (_, i) => SENT + 1 + i));
      expect(new Set([...sent, ...rest]).size).toBe(ROWS);
    } finally {
      outbox.close();
    }
  });

  it('a damaged file salvaged at the next start counts only unsent rows lost: delivered + counted + carried = polled, none sent twice', () => {
    const sent = stopWithAckedRows(mode);
    // A page of acknowledged rows and a page of unsent ones, both gone (in the file itself, not its WAL).
    checkpoint(path);
    zeroPageHolding(path, rowMarker(40));
    zeroPageHolding(path, rowMarker(200));
    const drops: OutboxDropInfo[] = [];
    const outbox = openOutbox(mode, { path, time: new ManualClock(), onDrop: (d) => drops.push(d) });
    try {
      const counted = drops.filter((d) => d.reason === 'file-lost').reduce((n, d) => n + d.records, 0);
      const rest = deliverNumbered(outbox, ['a']);
      expect(counted).toBeGreaterThan(0);
      expect(rest.filter((n) => n <= SENT), 'acknowledged rows are not sent again').toEqual([]);
      expect(sent.length + rest.length + counted).toBe(ROWS);
      expect(outbox.stats().dropped).toBe(counted);
    } finally {
      outbox.close();
    }
  });
});
