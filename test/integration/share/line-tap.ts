// A recording RTU peer on the far end of a pty pair: every request frame it hears (bytes and
// arrival time), holding registers per unit that writes change (a broadcast, unit 0, changes every
// unit's and is never answered), reads of its units answered with what they hold, other frames
// (a CRC that does not check) kept as heard and left unanswered.
import { crc16, encodeRtuFrame } from '../../../src/core/modbus/rtu-frame.js';
import { openSerialLine, type SerialLine } from '../../../packages/simulator/src/serial-line.js';
import { truth } from '../../helpers/hostile-modbus.js';

export interface HeardFrame {
  bytes: Buffer;
  /** performance.now() when it arrived. */
  at: number;
  crcOk: boolean;
}

export interface LineTap {
  readonly heard: HeardFrame[];
  /** Frames the tap sent back (never one for unit 0). */
  readonly answered: Buffer[];
  holding(unit: number, address: number): number;
  stop(): Promise<void>;
}

/** The length of the request frame starting `frame` (undefined: not enough bytes to know yet). */
function requestLength(bytes: Buffer): number | undefined {
  const fc = bytes[1];
  if (fc === undefined) return undefined;
  if (fc === 15 || fc === 16) return bytes.length >= 7 ? 9 + (bytes[6] as number) : undefined;
  return 8;
}

export async function startLineTap(path: string, units: readonly number[]): Promise<LineTap> {
  const heard: HeardFrame[] = [];
  const answered: Buffer[] = [];
  const memory = new Map<string, number>();
  const holding = (unit: number, address: number) => memory.get(`${unit}:${address}`) ?? truth(unit, address);
  const write = (unit: number, address: number, value: number) => {
    for (const u of unit === 0 ? units : [unit]) memory.set(`${u}:${address}`, value);
  };
  let pending = Buffer.alloc(0);
  let line: SerialLine | undefined;
  const reply = (unit: number, pdu: Buffer) => {
    if (unit === 0 || !units.includes(unit)) return;
    const frame = encodeRtuFrame(unit, pdu);
    answered.push(frame);
    line?.write(frame);
  };
  const serve = (frame: Buffer) => {
    const unit = frame[0] as number;
    const fc = frame[1] as number;
    const address = frame.readUInt16BE(2);
    if (fc === 3) {
      const count = frame.readUInt16BE(4);
      const pdu = Buffer.alloc(2 + 2 * count);
      pdu[0] = 3;
      pdu[1] = 2 * count;
      for (let i = 0; i < count; i += 1) pdu.writeUInt16BE(holding(unit, address + i), 2 + 2 * i);
      reply(unit, pdu);
    } else if (fc === 6) {
      write(unit, address, frame.readUInt16BE(4));
      reply(unit, frame.subarray(1, 6));
    } else if (fc === 16) {
      const count = frame.readUInt16BE(4);
      for (let i = 0; i < count; i += 1) write(unit, address + i, frame.readUInt16BE(7 + 2 * i));
      reply(unit, frame.subarray(1, 6));
    }
  };
  line = await openSerialLine(path, { baud: 19200, parity: 'even', dataBits: 8, stopBits: 1 }, {
    onError: () => undefined,
    onClose: () => undefined,
    onData: (chunk) => {
      const at = performance.now();
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const length = requestLength(pending);
        if (length === undefined || pending.length < length) return;
        const bytes = Buffer.from(pending.subarray(0, length));
        pending = pending.subarray(length);
        const crcOk = crc16(bytes, 0, length - 2) === bytes.readUInt16LE(length - 2);
        heard.push({ bytes, at, crcOk });
        if (crcOk) serve(bytes);
      }
    },
  });
  return {
    heard, answered, holding,
    async stop() {
      await line?.close();
    },
  };
}
