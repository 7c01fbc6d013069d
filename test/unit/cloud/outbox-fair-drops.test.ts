// Fair drops over the whole outbox (disk and memory): during an outage a device reporting 20 times
// a second must not evict a 2-per-second device's history. Both modes, real SQLite, manual time.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openOutbox } from '../../../src/cloud/outbox/open-outbox.js';
import type { OutboxDropInfo } from '../../../src/core/outbox-types.js';
import { ManualClock } from '../../helpers/manual-clock.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'outbox-fair-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

// [outage s, cap bytes]: 20-byte reports; fast 20/s, slow 2/s.
const cases: Array<[number, number]> = [
  [60, 12_000],
  [120, 8_000],
  [30, 4_000],
];

describe.each(['memory-first', 'write-ahead'] as const)('fair drops (%s)', (mode) => {
  it.each(cases)('a %d s outage under a %d byte cap: the slow device keeps its whole outage while it holds less than half', (seconds, cap) => {
    const clock = new ManualClock();
    const drops: OutboxDropInfo[] = [];
    const outbox = openOutbox(mode, { path: join(dir, 'outbox.db'), maxBytesTotal: cap, durableAfterMs: 1000, flushIntervalMs: 50, time: clock, onDrop: (d) => drops.push(d) });
    try {
      let fastN = 0;
      let slowN = 0;
      for (let tick = 0; tick < seconds * 20; tick += 1) {
        outbox.append('fast', `fast-${String(fastN++).padStart(14, '0')}`, clock.now());
        if (tick % 10 === 0) outbox.append('slow', `slow-${String(slowN++).padStart(14, '0')}`, clock.now());
        clock.advance(50);
      }
      outbox.flush();
      const stats = outbox.stats();
      const slowBytes = slowN * 20;
      expect(stats.bytes).toBeLessThanOrEqual(cap);
      if (slowBytes <= cap / 2) {
        // The slow device holds less than its fair half: none of its outage is lost.
        expect(stats.devices.slow?.dropped ?? 0).toBe(0);
        expect(outbox.peek('slow', 10_000).length).toBe(slowN);
      } else {
        // Both over half: each ends with about half of the cap.
        expect(Math.abs((stats.devices.slow?.bytes ?? 0) - (stats.devices.fast?.bytes ?? 0))).toBeLessThanOrEqual(40);
      }
      // Every report is held or counted as dropped, per device.
      for (const [device, n] of [['fast', fastN], ['slow', slowN]] as const) {
        expect((stats.devices[device]?.depth ?? 0) + (stats.devices[device]?.dropped ?? 0)).toBe(n);
        expect(drops.filter((d) => d.device === device).reduce((s, d) => s + d.records, 0)).toBe(stats.devices[device]?.dropped ?? 0);
      }
      // What is kept of the fast device is its newest reports, in order.
      const fastKept = outbox.peek('fast', 100_000).map((r) => r.payload.toString());
      expect(fastKept.at(-1)).toBe(`fast-${String(fastN - 1).padStart(14, '0')}`);
      expect([...fastKept].sort()).toEqual(fastKept);
    } finally {
      outbox.close();
    }
  });
});
