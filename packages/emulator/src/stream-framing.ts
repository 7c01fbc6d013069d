// Custom data push body {type, msg} -> the raw bytes a device receives (docs/protocol.md §3).
import { invalidFields } from './http/errors.js';
import { isPlainObject } from './http/validate.js';

export const STREAM_MESSAGE_TYPES = ['hex', 'text', 'json'] as const;

/** Throws an ApiError naming the field when the pair is malformed. */
export function encodeStreamMessage(type: unknown, msg: unknown): Buffer {
  if (type === undefined) throw invalidFields([{ field: 'type', message: 'is required' }]);
  if (msg === undefined) throw invalidFields([{ field: 'msg', message: 'is required' }]);
  switch (type) {
    case 'hex': {
      if (typeof msg !== 'string') throw invalidFields([{ field: 'msg', message: 'must be a string of hexadecimal bytes' }]);
      const compact = msg.replace(/\s+/g, '');
      if (compact === '' || !/^([0-9a-fA-F]{2})+$/.test(compact)) {
        throw invalidFields([{ field: 'msg', message: 'must be hexadecimal byte values such as "01 03 00 00"' }]);
      }
      return Buffer.from(compact, 'hex');
    }
    case 'text':
      if (typeof msg !== 'string') throw invalidFields([{ field: 'msg', message: 'must be a string' }]);
      return Buffer.from(msg, 'utf8');
    case 'json':
      if (!isPlainObject(msg)) throw invalidFields([{ field: 'msg', message: 'must be a JSON object' }]);
      return Buffer.from(JSON.stringify(msg), 'utf8');
    default:
      throw invalidFields([{ field: 'type', message: `must be one of ${STREAM_MESSAGE_TYPES.join(', ')}` }]);
  }
}
