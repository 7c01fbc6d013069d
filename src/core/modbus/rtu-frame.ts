// Modbus RTU framing (pure): CRC16 and RTU frames. Used by the daemon and by the simulator package.

const CRC_TABLE = buildCrcTable();

function buildCrcTable(): Uint16Array {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i += 1) {
    let crc = i;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 1 ? (crc >>> 1) ^ 0xa001 : crc >>> 1;
    table[i] = crc;
  }
  return table;
}

/** Modbus CRC16 (poly 0xA001 reflected, init 0xFFFF). Sent low byte first. */
export function crc16(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let crc = 0xffff;
  for (let i = start; i < end; i += 1) crc = (crc >>> 8) ^ CRC_TABLE[(crc ^ bytes[i]) & 0xff];
  return crc;
}

/** unit + PDU + CRC (low byte first). */
export function encodeRtuFrame(unit: number, pdu: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(pdu.length + 3);
  frame[0] = unit;
  frame.set(pdu, 1);
  const crc = crc16(frame, 0, pdu.length + 1);
  frame[pdu.length + 1] = crc & 0xff;
  frame[pdu.length + 2] = crc >>> 8;
  return frame;
}

export type RtuDecodeResult =
  | { ok: true; unit: number; pdu: Buffer }
  | { ok: false; reason: 'too-short' | 'bad-crc' };

export function decodeRtuFrame(frame: Buffer): RtuDecodeResult {
  if (frame.length < 4) return { ok: false, reason: 'too-short' };
  const crc = crc16(frame, 0, frame.length - 2);
  const sent = frame[frame.length - 2] | (frame[frame.length - 1] << 8);
  if (crc !== sent) return { ok: false, reason: 'bad-crc' };
  return { ok: true, unit: frame[0], pdu: frame.subarray(1, frame.length - 2) };
}

/** RTU frame bytes (unit, PDU, CRC) of a request of `functionCode` for `quantity` registers or bits (1 for FC5/FC6). */
export function requestFrameLength(functionCode: number, quantity: number): number {
  switch (functionCode) {
    case 15: return 9 + Math.ceil(quantity / 8);
    case 16: return 9 + 2 * quantity;
    default: return 8; // FC1-6: address and count (or value)
  }
}
