import { describe, expect, it } from 'vitest';
import type { OutboxStats } from '../../src/core/outbox-types.js';
import { asEpoch } from '../../src/core/time.js';
import { backlogOf, ReplayProgress, type BacklogFigures } from '../../src/core/outbox-backlog.js';

function stats(partial: Partial<OutboxStats>): OutboxStats {
  return { devices: {}, depth: 0, bytes: 0, dropped: 0, buffered: 0, onDisk: 0, diskBytes: 0, oldestTs: undefined, ...partial };
}

describe('backlogOf', () => {
  it.each<[string, Partial<OutboxStats>, number, BacklogFigures]>([
    ['empty', {}, 1000, { reports: 0, bytes: 0, onDisk: 0, inMemory: 0, oldestAgeMs: null }],
    ['memory-first: depth counts memory', { depth: 7, bytes: 70, buffered: 3, onDisk: 4, oldestTs: 400 }, 1000, { reports: 7, bytes: 70, onDisk: 4, inMemory: 3, oldestAgeMs: 600 }],
    ['write-ahead: pending commit counted', { depth: 4, bytes: 40, buffered: 2, onDisk: 4, oldestTs: 900 }, 1000, { reports: 6, bytes: 40, onDisk: 4, inMemory: 2, oldestAgeMs: 100 }],
    ['a sample time in the future is age 0', { depth: 1, onDisk: 1, oldestTs: 2000 }, 1000, { reports: 1, bytes: 0, onDisk: 1, inMemory: 0, oldestAgeMs: 0 }],
  ])('%s', (_name, partial, now, expected) => {
    expect(backlogOf(stats(partial), asEpoch(now))).toEqual(expected);
  });
});

describe('ReplayProgress', () => {
  const backlog = (reports: number, oldestAgeMs: number | null): BacklogFigures => ({ reports, bytes: reports * 10, onDisk: reports, inMemory: 0, oldestAgeMs });

  it('logs the start once, progress at a bounded rate, and the end once', () => {
    const progress = new ReplayProgress(10_000, 1000);
    const log: string[] = [];
    const steps: Array<[number, BacklogFigures, number]> = [
      [0, backlog(5, 200), 0],            // healthy: young reports only
      [5000, backlog(500, 4000), 0],      // backlog building
      [10_000, backlog(900, 9000), 0],    // too soon for progress
      [15_000, backlog(800, 14_000), 400], // progress: 400 acked in 10 s
      [20_000, backlog(300, 8000), 900],  // too soon
      [25_000, backlog(100, 3000), 1400], // progress
      [26_000, backlog(3, 300), 1500],    // replayed
      [40_000, backlog(3, 300), 2000],    // nothing
    ];
    for (const [now, figures, acked] of steps) {
      const event = progress.next(now, figures, acked);
      if (event) log.push(`${event.level} ${event.message} ${JSON.stringify(event.fields)}`);
    }
    expect(log).toEqual([
      'warn outbox backlog building {"reports":500,"bytes":5000,"oldestAgeMs":4000}',
      'info outbox replay progress {"reports":800,"bytes":8000,"oldestAgeMs":14000,"ackedPerS":40}',
      'info outbox replay progress {"reports":100,"bytes":1000,"oldestAgeMs":3000,"ackedPerS":100}',
      'info outbox backlog replayed {"reports":3,"bytes":30,"oldestAgeMs":300,"durationMs":21000}',
    ]);
  });

  it('says nothing for an empty outbox, nor for old reports that are only in memory', () => {
    const progress = new ReplayProgress(1000, 1000);
    expect([0, 5000, 10_000].map((now) => progress.next(now, backlog(0, null), 0))).toEqual([undefined, undefined, undefined]);
    // A device whose poll cycle takes 5 s: its report is 5 s old when appended, and acked at once.
    const slowPoll = { reports: 1, bytes: 10, onDisk: 0, inMemory: 1, oldestAgeMs: 5000 };
    expect(progress.next(20_000, slowPoll, 0)).toBeUndefined();
  });
});

describe('ReplayProgress while disk reads fail', () => {
  const backlog = (onDisk: number, oldestAgeMs: number | null): BacklogFigures => ({ reports: onDisk, bytes: onDisk * 10, onDisk, inMemory: 0, oldestAgeMs });

  it('rows on disk of unknown age (their read fails) keep the backlog: "replayed" only once they are gone', () => {
    const progress = new ReplayProgress(10_000, 1000);
    expect(progress.next(0, backlog(2000, 30_000), 0)?.message).toBe('outbox backlog building');
    // The oldest row cannot be read: its age is unknown, the 2,000 rows are still there.
    expect(progress.next(1000, backlog(2000, null), 0)?.message).not.toBe('outbox backlog replayed');
    expect(progress.next(2000, backlog(2000, null), 0)?.message).not.toBe('outbox backlog replayed');
    expect(progress.next(3000, backlog(0, null), 2000)?.message).toBe('outbox backlog replayed');
  });

  it('hostile: unknown age with no backlog open starts none', () => {
    const progress = new ReplayProgress(10_000, 1000);
    expect(progress.next(0, backlog(5, null), 0)).toBeUndefined();
  });
});
