// The late-reply guard's price follows the evidence (issue 28): a unit never seen answering late
// holds back only requests its late reply could be taken for (same function and reply length), and
// a read of that shape goes as shorter reads; a unit seen answering late waits as a whole.
import { describe, expect, it } from 'vitest';
import { LateReplyGuard } from '../../../src/field/modbus/late-guard.js';

const FC3 = (quantity: number, splittable = true) => ({ functionCode: 3, quantity, splittable });
const GUARD_MS = 10_000;

describe('LateReplyGuard', () => {
  it('a unit never seen late: other shapes go, the same read goes split, a single register waits', () => {
    const guard = new LateReplyGuard();
    guard.onTimeout(1, { functionCode: 3, quantity: 4 }, 0, GUARD_MS);
    expect(guard.admit(1, FC3(3), 1)).toEqual({ kind: 'go' });
    expect(guard.admit(1, { functionCode: 4, quantity: 4, splittable: true }, 1)).toEqual({ kind: 'go' });
    expect(guard.admit(1, FC3(4), 1)).toEqual({ kind: 'split', pieceCount: 2 });
    expect(guard.admit(1, FC3(5), 1)).toEqual({ kind: 'go' });
    guard.onTimeout(1, { functionCode: 3, quantity: 5 }, 0, GUARD_MS);
    expect(guard.admit(1, FC3(5), 1)).toEqual({ kind: 'split', pieceCount: 3 });
    expect(guard.admit(2, FC3(4), 1)).toEqual({ kind: 'go' });
    guard.onTimeout(1, { functionCode: 3, quantity: 1 }, 0, GUARD_MS);
    expect(guard.admit(1, FC3(1), 5)).toEqual({ kind: 'wait', retryInMs: GUARD_MS - 5, lateSeen: false });
    expect(guard.admit(1, { functionCode: 3, quantity: 4, splittable: false }, 5)).toMatchObject({ kind: 'wait' });
  });

  it('pieces avoid every length still awaited, the last one included; halves first', () => {
    const guard = new LateReplyGuard();
    guard.onTimeout(1, { functionCode: 3, quantity: 8 }, 0, GUARD_MS);
    expect(guard.admit(1, FC3(8), 1)).toEqual({ kind: 'split', pieceCount: 4 });
    guard.onTimeout(1, { functionCode: 3, quantity: 4 }, 0, GUARD_MS);
    expect(guard.admit(1, FC3(8), 1)).toEqual({ kind: 'split', pieceCount: 7 });
    guard.onTimeout(1, { functionCode: 3, quantity: 1 }, 0, GUARD_MS);
    expect(guard.admit(1, FC3(8), 1)).toEqual({ kind: 'split', pieceCount: 6 });
    guard.onTimeout(1, { functionCode: 3, quantity: 2 }, 0, GUARD_MS);
    expect(guard.admit(1, FC3(8), 1)).toEqual({ kind: 'split', pieceCount: 5 });
    guard.onTimeout(1, { functionCode: 3, quantity: 3 }, 0, GUARD_MS);
    expect(guard.admit(1, FC3(4), 1)).toMatchObject({ kind: 'wait' });
  });

  it('bit reads: pieces must differ in bytes, not in bits', () => {
    const guard = new LateReplyGuard();
    guard.onTimeout(1, { functionCode: 1, quantity: 12 }, 0, GUARD_MS); // 2 data bytes
    expect(guard.admit(1, { functionCode: 1, quantity: 12, splittable: true }, 1)).toEqual({ kind: 'split', pieceCount: 6 });
    expect(guard.admit(1, { functionCode: 1, quantity: 9, splittable: true }, 1)).toEqual({ kind: 'split', pieceCount: 5 });
    guard.onTimeout(1, { functionCode: 1, quantity: 4 }, 0, GUARD_MS); // 1 data byte
    expect(guard.admit(1, { functionCode: 1, quantity: 12, splittable: true }, 1)).toMatchObject({ kind: 'wait' });
  });

  it('the late reply releases its shape; the unit seen late then waits as a whole, with a learned guard', () => {
    const guard = new LateReplyGuard();
    guard.onTimeout(1, { functionCode: 3, quantity: 4 }, 0, 1_000);
    expect(guard.onLateReply(1, { functionCode: 3, quantity: 4 }, 1_300, 1_300)).toBe(true);
    expect(guard.admit(1, FC3(4), 1_400)).toEqual({ kind: 'go' });
    guard.onTimeout(1, { functionCode: 3, quantity: 4 }, 2_000, 1_000);
    expect(guard.admit(1, { functionCode: 6, quantity: 1, splittable: false }, 2_100)).toEqual({ kind: 'wait', retryInMs: 2_500, lateSeen: true });
    expect(guard.list(2_100)).toEqual([{ unit: 1, lateReplies: 1, slowestAnswerMs: 1_300, guardedUntil: 4_600 }]);
    expect(guard.onLateReply(1, { functionCode: 3, quantity: 4 }, 900, 2_150)).toBe(false);
    expect(guard.admit(1, FC3(4), 2_200)).toEqual({ kind: 'go' });
  });

  it('a timeout the transport did not describe guards the whole unit; the guard runs out', () => {
    const guard = new LateReplyGuard();
    guard.onTimeout(1, undefined, 0, GUARD_MS);
    expect(guard.admit(1, FC3(7), 1)).toMatchObject({ kind: 'wait', lateSeen: false });
    expect(guard.admit(1, FC3(7), GUARD_MS)).toEqual({ kind: 'go' });
    expect(guard.list(GUARD_MS)).toEqual([]);
  });
});

// Issue 41: the identical request is never held; a guard that ran out ends on evidence; "seen
// late" decays.
describe('LateReplyGuard: identical repeats, guards settled by evidence, lessons that decay', () => {
  const AT = (address: number, quantity = 4) => ({ functionCode: 4, quantity, address, splittable: true });

  it('the repeat of the timed-out request goes whole while the guard runs; the shape at another address goes split', () => {
    const guard = new LateReplyGuard();
    guard.onTimeout(1, { functionCode: 4, quantity: 4, address: 50 }, 0, GUARD_MS);
    expect(guard.admit(1, { ...AT(50), repeat: true }, 1)).toEqual({ kind: 'go' });
    expect(guard.admit(1, AT(50), 1)).toEqual({ kind: 'split', pieceCount: 2 }); // a later poll: its late answer could be a guard old
    expect(guard.admit(1, AT(50), GUARD_MS)).toEqual({ kind: 'go' }); // the guard ran out: the identical request settles it
    expect(guard.admit(1, AT(0), 1)).toEqual({ kind: 'split', pieceCount: 2 });
    guard.onTimeout(1, { functionCode: 4, quantity: 1, address: 60 }, 0, GUARD_MS);
    expect(guard.admit(1, AT(0, 1), 1)).toMatchObject({ kind: 'wait' });
    expect(guard.admit(1, { ...AT(60, 1), repeat: true }, 1)).toEqual({ kind: 'go' });
  });

  it('past its guard, the shape at another address waits for the identical request answered after it (at most one guard more)', () => {
    const guard = new LateReplyGuard();
    guard.onTimeout(1, { functionCode: 4, quantity: 4, address: 50 }, 0, GUARD_MS);
    guard.onAnswered(1, { functionCode: 4, quantity: 4, address: 50 }, 5_000); // inside the guard: no evidence yet
    expect(guard.admit(1, AT(0), GUARD_MS + 1)).toEqual({ kind: 'split', pieceCount: 2 });
    expect(guard.admit(1, { ...AT(0), splittable: false }, GUARD_MS + 1)).toEqual({ kind: 'wait', retryInMs: GUARD_MS - 1, lateSeen: false });
    guard.onAnswered(1, { functionCode: 4, quantity: 4, address: 0 }, GUARD_MS + 2); // another address: no evidence
    expect(guard.admit(1, AT(0), GUARD_MS + 3)).toEqual({ kind: 'split', pieceCount: 2 });
    guard.onAnswered(1, { functionCode: 4, quantity: 4, address: 50 }, GUARD_MS + 4);
    expect(guard.admit(1, AT(0), GUARD_MS + 5)).toEqual({ kind: 'go' });
    // Without that answer, one guard length more at most.
    guard.onTimeout(2, { functionCode: 4, quantity: 4, address: 50 }, 0, GUARD_MS);
    expect(guard.admit(2, AT(0), 2 * GUARD_MS - 1)).toEqual({ kind: 'split', pieceCount: 2 });
    expect(guard.admit(2, AT(0), 2 * GUARD_MS)).toEqual({ kind: 'go' });
  });

  it('"seen late" is forgotten after enough answers in time, and the learned guard with it', () => {
    const guard = new LateReplyGuard({ afterAnswers: 3, afterMs: 1_000_000 });
    guard.onTimeout(1, { functionCode: 3, quantity: 2, address: 0 }, 0, 1_000);
    expect(guard.onLateReply(1, { functionCode: 3, quantity: 2 }, 4_000, 4_000)).toBe(true);
    guard.onAnswered(1, { functionCode: 3, quantity: 2, address: 0 }, 5_000);
    guard.onAnswered(1, { functionCode: 3, quantity: 2, address: 0 }, 6_000);
    expect(guard.onTimeout(1, { functionCode: 3, quantity: 2, address: 0 }, 7_000, 1_000)).toBe(6_000); // learned: capped 6x
    expect(guard.holdsWholeUnit(1, 7_001)).toBe(true);
    expect(guard.onLateReply(1, { functionCode: 3, quantity: 2 }, 1_100, 8_100)).toBe(false);
    for (let i = 0; i < 2; i += 1) expect(guard.onAnswered(1, undefined, 9_000 + i)).toBe(false);
    expect(guard.onAnswered(1, undefined, 9_100)).toBe(true); // the third answer in time since the last late reply
    expect(guard.onTimeout(1, { functionCode: 3, quantity: 2, address: 0 }, 10_000, 1_000)).toBe(1_000);
    expect(guard.holdsWholeUnit(1, 10_001)).toBe(false);
    expect(guard.admit(1, { functionCode: 3, quantity: 1, address: 0, splittable: false }, 10_001)).toEqual({ kind: 'go' });
    expect(guard.list(10_001)).toEqual([{ unit: 1, lateReplies: 2, slowestAnswerMs: 4_000, guardedUntil: 11_000 }]);
  });

  it('"seen late" is forgotten after a time without a late reply', () => {
    const guard = new LateReplyGuard({ afterAnswers: 1_000, afterMs: 60_000 });
    guard.onTimeout(1, { functionCode: 3, quantity: 2, address: 0 }, 0, 1_000);
    guard.onLateReply(1, { functionCode: 3, quantity: 2 }, 1_500, 1_500);
    expect(guard.onAnswered(1, undefined, 61_499)).toBe(false);
    expect(guard.onAnswered(1, undefined, 61_500)).toBe(true);
  });
});
