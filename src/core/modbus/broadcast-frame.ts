// The RTU frame of a write broadcast to every unit of a line: unit 0, a FC5/6/15/16 request PDU and
// the CRC. Nobody answers it (Modbus over serial line V1.02 §2.1: a broadcast is a write, and no
// slave replies to it); the master only waits the turnaround delay before its next request.
import { encodeRtuFrame } from './rtu-frame.js';

/** The writes a broadcast may carry (the bus's write operations). */
export type BroadcastWrite =
  | { kind: 'write-registers'; address: number; values: readonly number[]; forceMulti: boolean }
  | { kind: 'write-coils'; address: number; values: readonly boolean[]; forceMulti: boolean };

/** FC6 / FC5 for one value unless `forceMulti`, FC16 / FC15 otherwise. */
export function broadcastFunction(write: BroadcastWrite): 5 | 6 | 15 | 16 {
  const single = write.values.length === 1 && !write.forceMulti;
  if (write.kind === 'write-registers') return single ? 6 : 16;
  return single ? 5 : 15;
}

/** The request PDU of a write (function code + data). */
export function writeRequestPdu(write: BroadcastWrite): Buffer {
  const functionCode = broadcastFunction(write);
  if (functionCode === 5 || functionCode === 6) {
    const pdu = Buffer.alloc(5);
    pdu[0] = functionCode;
    pdu.writeUInt16BE(write.address, 1);
    pdu.writeUInt16BE(write.kind === 'write-coils' ? (write.values[0] === true ? 0xff00 : 0) : (write.values[0] as number), 3);
    return pdu;
  }
  const count = write.values.length;
  const byteCount = write.kind === 'write-coils' ? Math.ceil(count / 8) : 2 * count;
  const pdu = Buffer.alloc(6 + byteCount);
  pdu[0] = functionCode;
  pdu.writeUInt16BE(write.address, 1);
  pdu.writeUInt16BE(count, 3);
  pdu[5] = byteCount;
  if (write.kind === 'write-registers') write.values.forEach((value, i) => pdu.writeUInt16BE(value, 6 + 2 * i));
  else write.values.forEach((bit, i) => { if (bit) pdu[6 + (i >> 3)] = (pdu[6 + (i >> 3)] as number) | (1 << (i & 7)); });
  return pdu;
}

/** The whole RTU frame of the broadcast (unit 0, PDU, CRC low byte first). */
export function broadcastFrame(write: BroadcastWrite): Buffer {
  return encodeRtuFrame(0, writeRequestPdu(write));
}
