// Recognises the late reply of a timed-out RTU request in the bytes a line received (pure). RTU has
// no transaction id: a late reply can only be told apart from a fresh one because fieldgate does
// not ask its unit a request of the same shape (function and reply length) until the late frame
// was seen (or its guard ran out), so any complete, CRC-valid frame of such a unit and shape is
// that late reply, whatever else is on the line around it. A unit may have several requests of
// different shapes awaited at once.
import { crc16 } from './rtu-frame.js';
import { expectedPduLength } from './reply-check.js';

/** A request that timed out and whose reply may still come. */
export interface AwaitedLateReply {
  unit: number;
  functionCode: number;
  /** Registers or bits asked (1 for FC5/FC6). */
  quantity: number;
  /** When the request went out (ms). */
  sentAt: number;
  /** Its start address (a request of the same shape and address is identical). */
  address?: number;
}

export interface LateFrame {
  unit: number;
  /** The awaited request the frame answers. */
  request: AwaitedLateReply;
  /** Offset and length of the frame in the scanned bytes. */
  offset: number;
  length: number;
}

const EXCEPTION_FRAME_BYTES = 5;

/** RTU frame bytes (unit + PDU + CRC) of the normal reply, or undefined for a function we do not know. */
export function replyFrameLength(functionCode: number, quantity: number): number | undefined {
  const pdu = expectedPduLength(functionCode, quantity);
  return pdu === undefined ? undefined : pdu + 3;
}

function validFrameAt(bytes: Uint8Array, offset: number, length: number): boolean {
  if (offset + length > bytes.length) return false;
  const sent = (bytes[offset + length - 2] as number) | ((bytes[offset + length - 1] as number) << 8);
  return crc16(bytes, offset, offset + length - 2) === sent;
}

/** Two requests whose normal replies cannot be told apart (same unit, function and frame length). */
export function sameReplyShape(a: Omit<AwaitedLateReply, 'sentAt'>, b: Omit<AwaitedLateReply, 'sentAt'>): boolean {
  return a.unit === b.unit && a.functionCode === b.functionCode
    && replyFrameLength(a.functionCode, a.quantity) === replyFrameLength(b.functionCode, b.quantity);
}

/** The frame length of `request`'s reply that starts with function code `code`, if it is one of its two forms. */
function frameLengthOf(request: AwaitedLateReply, code: number | undefined): number | undefined {
  if (code === (request.functionCode | 0x80)) return EXCEPTION_FRAME_BYTES;
  if (code === request.functionCode) return replyFrameLength(request.functionCode, request.quantity);
  return undefined;
}

/**
 * The complete, CRC-valid replies (normal or exception form) of `awaited` requests in `bytes`, in
 * order, at most one per awaited request (an exception form goes to the oldest request of its
 * unit and function), never overlapping.
 */
export function findLateFrames(bytes: Uint8Array, awaited: readonly AwaitedLateReply[]): LateFrame[] {
  const open = [...awaited].sort((a, b) => a.sentAt - b.sentAt);
  const found: LateFrame[] = [];
  for (let offset = 0; offset + EXCEPTION_FRAME_BYTES <= bytes.length && open.length > 0; offset += 1) {
    const unit = bytes[offset] as number;
    const code = bytes[offset + 1];
    const index = open.findIndex((request) => {
      if (request.unit !== unit) return false;
      const length = frameLengthOf(request, code);
      return length !== undefined && validFrameAt(bytes, offset, length);
    });
    if (index < 0) continue;
    const request = open[index] as AwaitedLateReply;
    const length = frameLengthOf(request, code) as number;
    found.push({ unit, request, offset, length });
    open.splice(index, 1);
    offset += length - 1;
  }
  return found;
}
