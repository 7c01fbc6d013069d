// A damaged page in a real outbox file (zeroed in the file itself), found at start and while
// running, in both modes: every readable row is kept in order, each unreadable one is counted once
// (per device, from the file's own counts), rows already delivered are never counted, and for
// every case delivered + counted = polled.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MovedAside } from '../../../src/cloud/outbox/outbox-file.js';
import { openOutbox } from '../../../src/cloud/outbox/open-outbox.js';
import type { OutboxDropInfo, ReportOutbox } from '../../../src/core/outbox-types.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { checkpoint as checkpointFile, deliverNumbered, numberedPayload, numberOfPayload, rowMarker, touch, zeroPageHolding } from '../../helpers/outbox-file.js';

let dir: string;
let path: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'outbox-salvage-'));
  path = join(dir, 'outbox.sqlite');
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

const devices = ['a', 'b', 'c'];
const marker = rowMarker;
const payload = numberedPayload;
const numberOf = numberOfPayload;

const checkpoint = () => checkpointFile(path);
const zeroPageOf = (n: number) => zeroPageHolding(path, marker(n));

const deliverAll = (outbox: ReportOutbox) => deliverNumbered(outbox, devices);

const counted = (drops: OutboxDropInfo[]) => drops.filter((d) => d.reason === 'file-lost').reduce((n, d) => n + d.records, 0);

describe.each(['memory-first', 'write-ahead'] as const)('a zeroed page (%s)', (mode) => {
  it('at start: the readable rows are carried over in order, each lost one counted per device', () => {
    const polled = 3001;
    const first = openOutbox(mode, { path, time: new ManualClock() });
    for (let n = 0; n < polled; n += 1) first.append(devices[n % 3], payload(n), n);
    first.close();
    checkpoint();
    zeroPageOf(1500);

    const drops: OutboxDropInfo[] = [];
    const moved: MovedAside[] = [];
    const outbox = openOutbox(mode, { path, time: new ManualClock(), onDrop: (d) => drops.push(d), onMovedAside: (m) => moved.push(m) });
    try {
      expect(moved).toHaveLength(1);
      const lost = counted(drops);
      expect(lost).toBeGreaterThan(0);
      expect(lost).toBeLessThan(40);
      expect(moved[0]).toMatchObject({ salvaged: polled - lost, lost });
      // Per device, from the file's counts: the three devices share the page.
      expect(new Set(drops.map((d) => d.device))).toEqual(new Set(devices));
      expect(outbox.stats()).toMatchObject({ depth: polled - lost, dropped: lost });
      const delivered = deliverAll(outbox);
      expect(new Set(delivered).size).toBe(delivered.length);
      expect(delivered.length + lost).toBe(polled);
      // The rows missing are exactly the ones counted, and around the zeroed row.
      const missing = Array.from({ length: polled }, (_, n) => n).filter((n) => !delivered.includes(n));
      expect(missing).toHaveLength(lost);
      expect(missing).toContain(1500);
    } finally {
      outbox.close();
    }
    // The fresh file is sound and keeps the dropped counters.
    const again = openOutbox(mode, { path, time: new ManualClock() });
    expect(again.stats().dropped).toBe(counted(drops));
    again.close();
  });

  it('while running: a failed read waits, the file is salvaged at the retry, nothing delivered is counted', () => {
    const polled = 900;
    const clock = new ManualClock();
    const drops: OutboxDropInfo[] = [];
    const moved: MovedAside[] = [];
    const outbox = openOutbox(mode, { path, time: clock, durableAfterMs: 60_000, flushIntervalMs: 60_000, storageRetryMs: 1000, onDrop: (d) => drops.push(d), onMovedAside: (m) => moved.push(m) });
    try {
      for (let n = 0; n < polled; n += 1) outbox.append(devices[n % 3], payload(n), n);
      outbox.flush();
      // The first 300 rows delivered and acknowledged (memory-first deletes them at its next write).
      const delivered: number[] = [];
      const cursor = new Map<string, number>();
      for (const device of devices) {
        const batch = outbox.peek(device, 100);
        delivered.push(...batch.map((r) => numberOf(r.payload)));
        cursor.set(device, batch[batch.length - 1].seq);
        outbox.ack(device, batch[batch.length - 1].seq);
      }
      checkpoint();
      zeroPageOf(150);
      zeroPageOf(600);
      // Another connection's write: the outbox's connection drops its page cache and reads the file.
      touch(path);
      const reads = devices.map((device) => outbox.peek(device, 1000, cursor.get(device)));
      expect(reads.some((r) => r.length === 0)).toBe(true);
      expect(outbox.stats().reads?.state).toBe('failing');
      // Found corrupt, but kept: a read error is transient until condemnAfterMs (60 s) of corrupt verdicts.
      clock.advance(1000);
      expect(moved).toHaveLength(0);
      expect(drops).toEqual([]);
      clock.advance(60_000);
      // The gateway's ticker checks the file (a forwarder's next failed read would too).
      outbox.checkFile?.();
      expect(moved).toHaveLength(1);
      expect(moved[0]).toMatchObject({ cause: 'found corrupt while running', salvaged: expect.any(Number), lost: counted(drops) });
      expect(readdirSync(dir).some((f) => f.includes('.corrupt-'))).toBe(true);
      const lost = counted(drops);
      expect(lost).toBeGreaterThan(0);
      expect(lost).toBeLessThan(40);
      for (const device of devices) {
        let after = cursor.get(device) ?? 0;
        for (;;) {
          const batch = outbox.peek(device, 50, after);
          if (batch.length === 0) break;
          delivered.push(...batch.map((r) => numberOf(r.payload)));
          after = batch[batch.length - 1].seq;
          outbox.ack(device, after);
        }
      }
      expect(new Set(delivered).size).toBe(delivered.length);
      // Rows 0-299 were delivered before: the zeroed page holding row 150 costs nothing.
      expect(delivered.length + lost).toBe(polled);
      expect(outbox.stats()).toMatchObject({ depth: 0, dropped: lost, reads: { state: 'ok' } });
    } finally {
      outbox.close();
    }
  });
});
