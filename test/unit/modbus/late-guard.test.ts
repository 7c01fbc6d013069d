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
    expect(guard.onLateReply(1, { functionCode: 3, quantity: 4 }, 1_300)).toBe(true);
    expect(guard.admit(1, FC3(4), 1_400)).toEqual({ kind: 'go' });
    guard.onTimeout(1, { functionCode: 3, quantity: 4 }, 2_000, 1_000);
    expect(guard.admit(1, { functionCode: 6, quantity: 1, splittable: false }, 2_100)).toEqual({ kind: 'wait', retryInMs: 2_500, lateSeen: true });
    expect(guard.list(2_100)).toEqual([{ unit: 1, lateReplies: 1, slowestAnswerMs: 1_300, guardedUntil: 4_600 }]);
    expect(guard.onLateReply(1, { functionCode: 3, quantity: 4 }, 900)).toBe(false);
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
