// Modbus framing of the simulated server (pure): faults on RTU frames, request lengths for stream
// assembly, MBAP headers. CRC and RTU frames are the daemon's (fieldgate/workspace-kit).

/** Flip the CRC so a master sees a corrupted frame (the "garble" fault). */
export function corruptCrc(frame: Buffer): Buffer {
  const copy = Buffer.from(frame);
  copy[copy.length - 1] ^= 0xff;
  return copy;
}

/**
 * Length of a complete RTU *request* frame (unit..CRC) as far as the bytes seen tell.
 * 'need-more': the header is not complete yet; 'unknown': the function code has no fixed
 * layout we know, so only line silence can end the frame.
 */
export function expectedRequestLength(buf: Uint8Array): number | 'need-more' | 'unknown' {
  if (buf.length < 2) return 'need-more';
  switch (buf[1]) {
    case 1: case 2: case 3: case 4: case 5: case 6: case 8:
      return 8;
    case 7: case 11: case 12: case 17:
      return 4;
    case 15: case 16:
      return buf.length < 7 ? 'need-more' : 9 + buf[6];
    case 22:
      return 10;
    case 23:
      return buf.length < 11 ? 'need-more' : 13 + buf[10];
    default:
      return 'unknown';
  }
}

export const MBAP_HEADER_BYTES = 7;
/** Largest PDU Modbus allows (253) + unit id. */
export const MBAP_MAX_LENGTH_FIELD = 254;

export interface MbapHeader {
  transactionId: number;
  protocolId: number;
  /** Bytes following the length field: unit id + PDU. */
  length: number;
  unit: number;
}

export function decodeMbapHeader(buf: Uint8Array): MbapHeader {
  return {
    transactionId: (buf[0] << 8) | buf[1],
    protocolId: (buf[2] << 8) | buf[3],
    length: (buf[4] << 8) | buf[5],
    unit: buf[6],
  };
}

export function encodeMbapFrame(transactionId: number, unit: number, pdu: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(MBAP_HEADER_BYTES + pdu.length);
  frame.writeUInt16BE(transactionId & 0xffff, 0);
  frame.writeUInt16BE(0, 2);
  frame.writeUInt16BE(pdu.length + 1, 4);
  frame[6] = unit;
  frame.set(pdu, MBAP_HEADER_BYTES);
  return frame;
}

export type MbapSplit =
  | { kind: 'frame'; header: MbapHeader; pdu: Buffer; rest: Buffer }
  | { kind: 'need-more' }
  | { kind: 'invalid'; reason: string };

/** Take the first complete MBAP frame off a TCP byte stream. */
export function splitMbapFrame(buf: Buffer): MbapSplit {
  if (buf.length < MBAP_HEADER_BYTES) return { kind: 'need-more' };
  const header = decodeMbapHeader(buf);
  if (header.protocolId !== 0) return { kind: 'invalid', reason: `protocol id ${header.protocolId} is not Modbus (0)` };
  if (header.length < 2 || header.length > MBAP_MAX_LENGTH_FIELD) {
    return { kind: 'invalid', reason: `MBAP length ${header.length} outside 2..${MBAP_MAX_LENGTH_FIELD}` };
  }
  const total = 6 + header.length;
  if (buf.length < total) return { kind: 'need-more' };
  return { kind: 'frame', header, pdu: buf.subarray(MBAP_HEADER_BYTES, total), rest: buf.subarray(total) };
}
