// A recording RTU peer on the far end of a pty pair: every request frame it hears (bytes and
// arrival time), holding registers per unit that writes change (a broadcast, unit 0, changes every
// unit's and is never answered), reads of its units answered with what they hold, other frames
// (a CRC that does not check) kept as heard and left unanswered. A misbehaving line can be made to
// answer broadcasts too (`settings.answersBroadcast`), or to lose replies on their way back
// (`settings.loseReplies`: the request is served, a write applied, its reply never arrives).
import { createServer, type Server, type Socket } from 'node:net';
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
  /** A misbehaving line: some unit answers a broadcast (with the echo of a write, as unit 0); the next `loseReplies` replies are lost. */
  readonly settings: { answersBroadcast: boolean; loseReplies: number };
  /** Written registers ("unit:address" -> value); the others hold their truth(). */
  readonly memory: Map<string, number>;
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

/** The tap on the far end of a pty pair (`path`). */
export async function startLineTap(path: string, units: readonly number[]): Promise<LineTap> {
  let line: SerialLine | undefined;
  const tap = lineTap(units, (bytes) => line?.write(bytes));
  line = await openSerialLine(path, { baud: 19200, parity: 'even', dataBits: 8, stopBits: 1 }, {
    onError: () => undefined,
    onClose: () => undefined,
    onData: tap.onData,
  });
  return { ...tap.view, stop: async () => { await line?.close(); } };
}

/** The tap as a TCP serial server (RTU frames on TCP, 127.0.0.1, an ephemeral port), as `rtu-over-tcp` buses talk. */
export async function startTcpLineTap(units: readonly number[]): Promise<LineTap & { port: number }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const tap = lineTap(units, (bytes) => { if (!socket.destroyed) socket.write(bytes); }, view);
    socket.on('data', tap.onData);
  });
  const view = lineTap(units, () => undefined).view;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    ...view,
    port: typeof address === 'object' && address ? address.port : 0,
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Hears request frames and answers them; `shared`: the record and memory of an earlier tap (one per connection, one line). */
function lineTap(units: readonly number[], send: (bytes: Buffer) => void, shared?: Omit<LineTap, 'stop'>):
  { onData: (chunk: Buffer) => void; view: Omit<LineTap, 'stop'> } {
  const heard: HeardFrame[] = shared?.heard ?? [];
  const answered: Buffer[] = shared?.answered ?? [];
  const memory: Map<string, number> = shared?.memory ?? new Map<string, number>();
  const settings = shared?.settings ?? { answersBroadcast: false, loseReplies: 0 };
  const holding = (unit: number, address: number) => memory.get(`${unit}:${address}`) ?? truth(unit, address);
  const write = (unit: number, address: number, value: number) => {
    for (const u of unit === 0 ? units : [unit]) memory.set(`${u}:${address}`, value);
  };
  let pending = Buffer.alloc(0);
  const reply = (unit: number, pdu: Buffer) => {
    if (unit === 0 ? !settings.answersBroadcast : !units.includes(unit)) return;
    if (settings.loseReplies > 0) {
      settings.loseReplies -= 1;
      return;
    }
    const frame = encodeRtuFrame(unit, pdu);
    answered.push(frame);
    send(frame);
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
  const onData = (chunk: Buffer) => {
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
  };
  return { onData, view: { heard, answered, settings, memory, holding } };
}
