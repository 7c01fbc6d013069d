import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../packages/emulator/src/http/errors.js';
import { encodeStreamMessage } from '../../../packages/emulator/src/stream-framing.js';

describe('encodeStreamMessage', () => {
  it.each([
    ['hex', '01 03 00 00', [1, 3, 0, 0]],
    ['hex', 'DEADbeef', [0xde, 0xad, 0xbe, 0xef]],
    ['hex', ' 0a\t0B ', [10, 11]],
    ['text', 'ab', [0x61, 0x62]],
    ['text', '€', [0xe2, 0x82, 0xac]],
    ['json', { a: [1] }, [...Buffer.from('{"a":[1]}')]],
  ])('%s %j -> raw bytes', (type, msg, bytes) => {
    expect([...encodeStreamMessage(type, msg)]).toEqual(bytes);
  });

  it.each([
    ['hex', '0', 'msg'], ['hex', 'zz', 'msg'], ['hex', '', 'msg'], ['hex', 12, 'msg'], ['text', 5, 'msg'],
    ['json', [1], 'msg'], ['json', 'x', 'msg'], ['binary', '01', 'type'], [undefined, '01', 'type'], ['hex', undefined, 'msg'],
  ])('refuses %s %j naming %s', (type, msg, field) => {
    try {
      encodeStreamMessage(type, msg);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).errors[0].field).toBe(field);
    }
  });
});
