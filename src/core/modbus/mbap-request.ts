// Pure Modbus TCP server side: a request PDU (after MbapFramer cut it out) -> what it asks, or the
// exception the standard names for it; and the MBAP frames of answers and exceptions.
import type { Table } from '../points/types.js';

/** Modbus exception codes a share answers with. */
export const EXCEPTION = {
  illegalFunction: 0x01,
  illegalDataAddress: 0x02,
  illegalDataValue: 0x03,
  serverFailure: 0x04,
  serverBusy: 0x06,
  gatewayPathUnavailable: 0x0a,
  gatewayTargetNoResponse: 0x0b,
} as const;

export type ShareRequest =
  | { kind: 'read'; functionCode: 1 | 2 | 3 | 4; table: Table; start: number; count: number }
  | { kind: 'write-coils'; functionCode: 5 | 15; address: number; values: readonly boolean[] }
  | { kind: 'write-registers'; functionCode: 6 | 16; address: number; values: readonly number[] };

export type ParsedRequest = { ok: true; request: ShareRequest } | { ok: false; functionCode: number; exception: number };

const READ_TABLES: Record<number, Table> = { 1: 'coil', 2: 'discrete', 3: 'holding', 4: 'input' };
/** Largest quantity per function (Modbus application protocol v1.1b3). */
const MAX_QUANTITY: Record<number, number> = { 1: 2000, 2: 2000, 3: 125, 4: 125, 15: 1968, 16: 123 };

function refuse(functionCode: number, exception: number): ParsedRequest {
  return { ok: false, functionCode, exception };
}

/** Parses a request PDU (function code + data); anything else than FC 1-6, 15, 16 is an illegal function. */
export function parseRequestPdu(pdu: Buffer): ParsedRequest {
  const functionCode = pdu.length > 0 ? (pdu[0] as number) : 0;
  if (functionCode === 0 || functionCode >= 0x80) return refuse(functionCode & 0x7f, EXCEPTION.illegalFunction);
  const table = READ_TABLES[functionCode];
  if (table) {
    if (pdu.length !== 5) return refuse(functionCode, EXCEPTION.illegalDataValue);
    const start = pdu.readUInt16BE(1);
    const count = pdu.readUInt16BE(3);
    if (count < 1 || count > (MAX_QUANTITY[functionCode] as number)) return refuse(functionCode, EXCEPTION.illegalDataValue);
    if (start + count > 65536) return refuse(functionCode, EXCEPTION.illegalDataAddress);
    return { ok: true, request: { kind: 'read', functionCode: functionCode as 1 | 2 | 3 | 4, table, start, count } };
  }
  if (functionCode === 5 || functionCode === 6) {
    if (pdu.length !== 5) return refuse(functionCode, EXCEPTION.illegalDataValue);
    const address = pdu.readUInt16BE(1);
    const value = pdu.readUInt16BE(3);
    if (functionCode === 6) return { ok: true, request: { kind: 'write-registers', functionCode, address, values: [value] } };
    if (value !== 0xff00 && value !== 0x0000) return refuse(functionCode, EXCEPTION.illegalDataValue);
    return { ok: true, request: { kind: 'write-coils', functionCode, address, values: [value === 0xff00] } };
  }
  if (functionCode === 15 || functionCode === 16) {
    if (pdu.length < 6) return refuse(functionCode, EXCEPTION.illegalDataValue);
    const address = pdu.readUInt16BE(1);
    const count = pdu.readUInt16BE(3);
    const byteCount = pdu[5] as number;
    const expectedBytes = functionCode === 15 ? Math.ceil(count / 8) : 2 * count;
    if (count < 1 || count > (MAX_QUANTITY[functionCode] as number) || byteCount !== expectedBytes || pdu.length !== 6 + byteCount) {
      return refuse(functionCode, EXCEPTION.illegalDataValue);
    }
    if (address + count > 65536) return refuse(functionCode, EXCEPTION.illegalDataAddress);
    const data = pdu.subarray(6);
    if (functionCode === 16) {
      const values = Array.from({ length: count }, (_, i) => data.readUInt16BE(2 * i));
      return { ok: true, request: { kind: 'write-registers', functionCode, address, values } };
    }
    const values = Array.from({ length: count }, (_, i) => (((data[i >> 3] as number) >> (i & 7)) & 1) === 1);
    return { ok: true, request: { kind: 'write-coils', functionCode, address, values } };
  }
  return refuse(functionCode, EXCEPTION.illegalFunction);
}

/** The registers or bits a request touches: [table, first, last]. */
export function requestSpan(request: ShareRequest): { table: Table; first: number; last: number } {
  if (request.kind === 'read') return { table: request.table, first: request.start, last: request.start + request.count - 1 };
  const table: Table = request.kind === 'write-coils' ? 'coil' : 'holding';
  return { table, first: request.address, last: request.address + request.values.length - 1 };
}

export function isWrite(request: ShareRequest): boolean {
  return request.kind !== 'read';
}

/** An MBAP frame around `pdu`. */
export function mbapFrame(transactionId: number, unit: number, pdu: Buffer): Buffer {
  const frame = Buffer.alloc(7 + pdu.length);
  frame.writeUInt16BE(transactionId, 0);
  frame.writeUInt16BE(0, 2);
  frame.writeUInt16BE(pdu.length + 1, 4);
  frame[6] = unit;
  pdu.copy(frame, 7);
  return frame;
}

export function exceptionPdu(functionCode: number, exception: number): Buffer {
  return Buffer.from([(functionCode | 0x80) & 0xff, exception]);
}

/** The normal reply of a read: registers as big-endian words, bits packed LSB first. */
export function readReplyPdu(request: Extract<ShareRequest, { kind: 'read' }>, data: { words?: ArrayLike<number>; bits?: readonly boolean[] }): Buffer {
  if (request.functionCode === 3 || request.functionCode === 4) {
    const pdu = Buffer.alloc(2 + 2 * request.count);
    pdu[0] = request.functionCode;
    pdu[1] = 2 * request.count;
    for (let i = 0; i < request.count; i += 1) pdu.writeUInt16BE((data.words?.[i] ?? 0) & 0xffff, 2 + 2 * i);
    return pdu;
  }
  const bytes = Math.ceil(request.count / 8);
  const pdu = Buffer.alloc(2 + bytes);
  pdu[0] = request.functionCode;
  pdu[1] = bytes;
  for (let i = 0; i < request.count; i += 1) if (data.bits?.[i] === true) pdu[2 + (i >> 3)] = (pdu[2 + (i >> 3)] as number) | (1 << (i & 7));
  return pdu;
}

/** The normal reply of a write: FC5/FC6 echo address and value, FC15/FC16 address and quantity. */
export function writeReplyPdu(request: Exclude<ShareRequest, { kind: 'read' }>): Buffer {
  const pdu = Buffer.alloc(5);
  pdu[0] = request.functionCode;
  pdu.writeUInt16BE(request.address, 1);
  if (request.functionCode === 5) pdu.writeUInt16BE(request.values[0] === true ? 0xff00 : 0, 3);
  else if (request.functionCode === 6) pdu.writeUInt16BE(request.values[0] as number, 3);
  else pdu.writeUInt16BE(request.values.length, 3);
  return pdu;
}
