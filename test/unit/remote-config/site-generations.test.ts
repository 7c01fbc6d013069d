// The generation book (pure), table-driven: the start's choice, applies, confirms, rollbacks, pruning.
import { describe, expect, it } from 'vitest';
import { asEpoch } from '../../../src/core/time.js';
import {
  addGeneration, chooseAtStart, confirmGeneration, historyView, parseBook, pruneBook, rollBackGeneration, type GenerationBook, type GenerationRecord,
} from '../../../src/core/config/site-generations.js';

const T = asEpoch(1_800_000_000_000);
const rec = (generation: number, outcome: GenerationRecord['outcome'], via: GenerationRecord['via'] = 'remote', digest = `d${generation}`): GenerationRecord => ({ generation, digest, at: T, via, outcome });
const book = (running: number, ...records: GenerationRecord[]): GenerationBook => ({ records, running, seedDigest: 'seed' });

describe('the start\'s choice', () => {
  // Table: [what, stored book, seed digest, generation run, reason, rolled back]
  const cases: Array<[string, GenerationBook | undefined, string, number, RegExp, number | undefined]> = [
    ['first start', undefined, 'seed', 1, /the seed file \(no generation applied since\)/, undefined],
    ['the last confirmed generation', book(3, rec(1, 'confirmed', 'seed', 'seed'), rec(2, 'rolled_back'), rec(3, 'confirmed')), 'seed', 3, /generation 3, the last confirmed \(remote/, undefined],
    ['a crash in a confirmation window', book(3, rec(1, 'confirmed', 'seed', 'seed'), rec(2, 'confirmed'), rec(3, 'awaiting_confirm')), 'seed', 2, /generation 3 awaited confirmation when fieldgate stopped/, 3],
    ['the seed edited on the box', book(2, rec(1, 'confirmed', 'seed', 'seed'), rec(2, 'confirmed')), 'seed-2', 3, /the seed file changed since it was last taken in: it runs as generation 3/, undefined],
    ['the seed edited during a window', book(2, rec(1, 'confirmed', 'seed', 'seed'), rec(2, 'awaiting_confirm')), 'seed-2', 3, /seed file changed/, 2],
    ['nothing confirmed before the window', book(1, rec(1, 'awaiting_confirm')), 'seed', 2, /the seed file \(no confirmed generation to run\)/, 1],
  ];
  it.each(cases)('%s', (_what, stored, seed, run, reason, rolledBack) => {
    const choice = chooseAtStart(stored, seed, T);
    expect(choice.run.generation).toBe(run);
    expect(choice.book.running).toBe(run);
    expect(choice.reason).toMatch(reason);
    expect(choice.rolledBack).toBe(rolledBack);
    if (rolledBack !== undefined) expect(choice.book.records.find((r) => r.generation === rolledBack)).toMatchObject({ outcome: 'rolled_back', reason: expect.stringMatching(/restarted/) });
    expect(choice.book.seedDigest).toBe(seed);
  });
});

describe('the book through an apply', () => {
  it('apply awaiting, confirm, apply awaiting, roll back: numbers never reused', () => {
    let b = chooseAtStart(undefined, 'seed', T).book;
    b = addGeneration(b, { digest: 'a', at: T, via: 'remote', confirmBy: asEpoch(T + 30_000) }).book;
    expect(b.records.at(-1)).toMatchObject({ generation: 2, outcome: 'awaiting_confirm', confirmBy: T + 30_000 });
    b = confirmGeneration(b, 2);
    expect(b.records.at(-1)).toEqual({ generation: 2, digest: 'a', at: T, via: 'remote', outcome: 'confirmed' });
    b = addGeneration(b, { digest: 'b', at: T, via: 'remote', confirmBy: asEpoch(T + 1) }).book;
    b = rollBackGeneration(b, 3, 2, 'not confirmed within 5 s');
    expect(b.running).toBe(2);
    expect(confirmGeneration(b, 3)).toBe(b);
    expect(addGeneration(b, { digest: 'a', at: T, via: 'rollback', from: 2 }).record).toMatchObject({ generation: 4, outcome: 'confirmed', from: 2 });
    expect(historyView(b, 2)).toEqual([
      { generation: 3, digest: 'b', at: new Date(T).toISOString(), via: 'remote', outcome: 'rolled_back', reason: 'not confirmed within 5 s', running: false },
      { generation: 2, digest: 'a', at: new Date(T).toISOString(), via: 'remote', outcome: 'confirmed', running: true },
    ]);
  });

  it('pruning keeps the newest, the running one and the one a rollback goes back to', () => {
    const b = book(2, rec(1, 'confirmed', 'seed'), rec(2, 'confirmed'), rec(3, 'rolled_back'), rec(4, 'rolled_back'), rec(5, 'rolled_back'));
    const pruned = pruneBook(b, 2);
    expect(pruned.book.records.map((r) => r.generation)).toEqual([1, 2, 4, 5]);
    expect(pruned.dropped).toEqual([3]);
    expect(pruneBook(b, 10).dropped).toEqual([]);
  });

  // Table: what a damaged book on disk reads as.
  const damaged: Array<[string, unknown]> = [
    ['not an object', 'x'], ['no records', { running: 1, seedDigest: 's' }], ['a bad outcome', { records: [{ ...rec(1, 'confirmed'), outcome: 'maybe' }], running: 1, seedDigest: 's' }],
    ['running unknown', { records: [rec(1, 'confirmed')], running: 2, seedDigest: 's' }], ['a string generation', { records: [{ ...rec(1, 'confirmed'), generation: '1' }], running: 1, seedDigest: 's' }],
  ];
  it.each(damaged)('a damaged book (%s) is no book', (_what, raw) => {
    expect(parseBook(raw)).toBeUndefined();
  });
  it('a sound book reads back', () => {
    const b = book(1, rec(1, 'confirmed'));
    expect(parseBook(JSON.parse(JSON.stringify(b)))).toEqual(b);
  });
});
