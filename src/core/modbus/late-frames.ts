// Recognises the late reply of a timed-out RTU request in the bytes a line received (pure). RTU has
// no transaction id: a late reply can only be told apart from a fresh one because fieldgate does
// not ask its unit again until the late frame was seen (or its guard ran out), so any complete,
// CRC-valid frame of such a unit is that late reply, whatever else is on the line around it.
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
}

export interface LateFrame {
  unit: number;
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

/**
 * The complete, CRC-valid replies (normal or exception form) of `awaited` requests in `bytes`, in
 * order, at most one per unit, never overlapping.
 */
export function findLateFrames(bytes: Uint8Array, awaited: readonly AwaitedLateReply[]): LateFrame[] {
  const open = new Map(awaited.map((a) => [a.unit, a]));
  const found: LateFrame[] = [];
  for (let offset = 0; offset + EXCEPTION_FRAME_BYTES <= bytes.length && open.size > 0; offset += 1) {
    const request = open.get(bytes[offset] as number);
    if (!request) continue;
    const code = bytes[offset + 1];
    let length: number | undefined;
    if (code === (request.functionCode | 0x80)) length = EXCEPTION_FRAME_BYTES;
    else if (code === request.functionCode) length = replyFrameLength(request.functionCode, request.quantity);
    if (length === undefined || !validFrameAt(bytes, offset, length)) continue;
    found.push({ unit: request.unit, offset, length });
    open.delete(request.unit);
    offset += length - 1;
  }
  return found;
}
