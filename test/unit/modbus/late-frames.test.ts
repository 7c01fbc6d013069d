// The late reply of a timed-out RTU request, found in whatever else the line carried (table-driven).
import { describe, expect, it } from 'vitest';
import { type AwaitedLateReply, findLateFrames, replyFrameLength } from '../../../src/core/modbus/late-frames.js';
import { encodeRtuFrame } from '../../../src/core/modbus/rtu-frame.js';

const read = (unit: number, words: number[], code = 3) => {
  const pdu = Buffer.alloc(2 + 2 * words.length);
  pdu[0] = code;
  pdu[1] = 2 * words.length;
  words.forEach((w, i) => pdu.writeUInt16BE(w, 2 + 2 * i));
  return encodeRtuFrame(unit, pdu);
};
const exception = (unit: number, code: number) => encodeRtuFrame(unit, Buffer.from([0x83, code]));
const awaited = (unit: number, quantity = 2, functionCode = 3): AwaitedLateReply => ({ unit, functionCode, quantity, sentAt: 0 });
const corrupt = (frame: Buffer) => Buffer.concat([frame.subarray(0, -1), Buffer.from([(frame.at(-1) as number) ^ 0xff])]);

describe('findLateFrames', () => {
  it.each([
    ['alone', read(2, [1, 2]), [awaited(2)], [{ unit: 2, offset: 0, length: 9 }]],
    ['after another unit\'s reply', Buffer.concat([read(1, [7, 8]), read(2, [1, 2])]), [awaited(2)], [{ unit: 2, offset: 9, length: 9 }]],
    ['before another unit\'s reply', Buffer.concat([read(2, [1, 2]), read(1, [7, 8])]), [awaited(2)], [{ unit: 2, offset: 0, length: 9 }]],
    ['in its exception form', exception(2, 6), [awaited(2)], [{ unit: 2, offset: 0, length: 5 }]],
    ['behind noise', Buffer.concat([Buffer.from([2, 3, 0, 9]), read(2, [5, 6])]), [awaited(2)], [{ unit: 2, offset: 4, length: 9 }]],
    ['two units at once, one frame each', Buffer.concat([read(3, [1]), read(2, [1, 2]), read(3, [1])]), [awaited(2), awaited(3, 1)],
      [{ unit: 3, offset: 0, length: 7 }, { unit: 2, offset: 7, length: 9 }]],
    ['not: a bad CRC', corrupt(read(2, [1, 2])), [awaited(2)], []],
    ['not: another length than asked', read(2, [1, 2, 3]), [awaited(2)], []],
    ['not: another function', read(2, [1, 2], 4), [awaited(2)], []],
    ['not: incomplete', read(2, [1, 2]).subarray(0, 7), [awaited(2)], []],
    ['not: a unit nobody awaits', read(1, [1, 2]), [awaited(2)], []],
    ['not: nothing awaited', read(2, [1, 2]), [], []],
    ['two requests of one unit, told apart by length', Buffer.concat([read(2, [1]), read(2, [1, 2])]), [awaited(2, 2), awaited(2, 1)],
      [{ unit: 2, offset: 0, length: 7 }, { unit: 2, offset: 7, length: 9 }]],
  ] as const)('%s', (_name, bytes, requests, expected) => {
    expect(findLateFrames(bytes, requests).map(({ unit, offset, length }) => ({ unit, offset, length }))).toEqual(expected);
  });

  it('names the request each frame answers; an exception form goes to the oldest request of its function', () => {
    const older = { ...awaited(2, 4), sentAt: 5 };
    const newer = { ...awaited(2, 1), sentAt: 9 };
    const found = findLateFrames(Buffer.concat([exception(2, 4), read(2, [7])]), [newer, older]);
    expect(found.map((f) => f.request)).toEqual([older, newer]);
  });

  it.each([[1, 10, 7], [2, 9, 7], [3, 2, 9], [4, 125, 255], [5, 1, 8], [6, 1, 8], [15, 20, 8], [16, 4, 8], [43, 1, undefined]] as const)(
    'replyFrameLength(fc %i, quantity %i) = %s', (fc, quantity, length) => {
      expect(replyFrameLength(fc, quantity)).toBe(length);
    });
});
