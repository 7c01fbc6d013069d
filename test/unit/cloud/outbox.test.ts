import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Outbox, type OutboxOptions } from '../../../src/cloud/outbox/outbox.js';
import { ManualClock } from '../../helpers/manual-clock.js';

let dir: string;
// Manual time: the commit timer fires only when a test advances it.
let clock = new ManualClock();
const open: Outbox[] = [];

function make(options: Partial<OutboxOptions> = {}): Outbox {
  const outbox = new Outbox({ path: join(dir, 'outbox.db'), flushIntervalMs: 10_000, flushRecords: 1000, time: clock, ...options });
  open.push(outbox);
  return outbox;
}

const text = (records: { payload: Buffer }[]) => records.map((r) => r.payload.toString());

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'outbox-'));
  clock = new ManualClock();
});

afterEach(() => {
  for (const outbox of open.splice(0)) outbox.close();
  rmSync(dir, { recursive: true, force: true });
});

// The rest of the behaviour is the contract of every mode: outbox-contract.test.ts.
describe('write-ahead Outbox', () => {
  it('keeps a FIFO per device and hides records until committed', () => {
    const outbox = make();
    outbox.append('a', 'a1', 1);
    outbox.append('b', 'b1', 2);
    outbox.append('a', 'a2', 3);
    expect(outbox.peek('a', 10)).toEqual([]);
    expect(outbox.stats().buffered).toBe(3);
    outbox.flush();
    const a = outbox.peek('a', 10);
    expect(text(a)).toEqual(['a1', 'a2']);
    expect(a.map((r) => r.ts)).toEqual([1, 3]);
    expect(text(outbox.peek('b', 10))).toEqual(['b1']);
    expect(text(outbox.peek('a', 1))).toEqual(['a1']);
    expect(text(outbox.peek('a', 10, a[0].seq))).toEqual(['a2']);
  });

  it('commits by record count and by timer, and tells who got records', () => {
    const commits: string[][] = [];
    const outbox = make({ flushRecords: 3, flushIntervalMs: 20, onCommit: (d) => commits.push([...d].sort()) });
    outbox.append('a', '1', 1);
    outbox.append('b', '2', 1);
    expect(commits).toEqual([]);
    outbox.append('a', '3', 1);
    expect(commits).toEqual([['a', 'b']]);
    outbox.append('c', '4', 1);
    clock.advance(19);
    expect(commits).toHaveLength(1);
    clock.advance(1);
    expect(commits).toHaveLength(2);
    expect(commits[1]).toEqual(['c']);
  });

});
