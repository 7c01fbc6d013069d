// A raw, scriptable RTU device on the far end of a socat pty pair (issue 28): it parses each
// request (FC1-6, FC15/16, and raw ASCII lines starting with '#') and answers as the test's script
// says: at once, late, with an exception, or not at all. In queueing mode it works like a device
// that takes requests in order and answers each only after the previous answer (`gapMs` later).
// Registers hold unit * 1000 + address until written, so a reply that answers another request
// shows as a wrong value.
import { crc16, encodeRtuFrame } from '../../src/core/modbus/rtu-frame.js';
import { openSerialLine, type SerialLine } from '../../packages/simulator/src/serial-line.js';

export const truthOf = (unit: number, address: number): number => (unit * 1000 + address) & 0xffff;

export interface TrapRequest {
  unit: number;
  functionCode: number;
  address: number;
  quantity: number;
  /** Date.now() when it was parsed. */
  at: number;
}

/**
 * What the device does with one request: the normal reply (or an exception) after `afterMs`, or
 * nothing. `valuesOf`: the reply carries the registers from that address on instead (a replayed
 * reply of an earlier read of the same function and length: CRC-valid, the values of another read).
 */
export type TrapAnswer = { afterMs: number; exception?: number; valuesOf?: number } | 'silent';

export interface TrapPeerOptions {
  /** Decides the answer per request; default: the truth at once. */
  answer?: (request: TrapRequest, index: number) => TrapAnswer;
  /** Answers in request order, each at least `gapMs` after the previous one went out. */
  queueing?: { gapMs: number };
  /** The answer to a raw line ('#...\n'), sent `afterMs` after it came. */
  raw?: { reply: Buffer; afterMs: number };
}

export interface TrapPeer {
  readonly requests: TrapRequest[];
  /** Raw lines received. */
  readonly rawRequests: Buffer[];
  answer: (request: TrapRequest, index: number) => TrapAnswer;
  stop(): Promise<void>;
}

function requestLength(bytes: Buffer): number | undefined {
  if (bytes.length < 2) return undefined;
  const code = bytes[1] as number;
  if (code >= 1 && code <= 6) return 8;
  if (code === 15 || code === 16) return bytes.length < 7 ? undefined : 9 + (bytes[6] as number);
  return 0; // not a request we know: resynchronise
}

export async function startTrapPeer(path: string, options: TrapPeerOptions = {}): Promise<TrapPeer> {
  const registers = new Map<string, number>();
  const coils = new Map<string, boolean>();
  const timers = new Set<NodeJS.Timeout>();
  let line: SerialLine | undefined;
  let lastSendAt = 0;
  const peer: TrapPeer = {
    requests: [], rawRequests: [],
    answer: options.answer ?? (() => ({ afterMs: 0 })),
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      await line?.close();
    },
  };
  const sendAfter = (bytes: Buffer, afterMs: number) => {
    let at = Date.now() + afterMs;
    if (options.queueing) at = Math.max(at, lastSendAt + options.queueing.gapMs);
    lastSendAt = at;
    const timer = setTimeout(() => {
      timers.delete(timer);
      line?.write(bytes);
    }, Math.max(0, at - Date.now()));
    timers.add(timer);
  };
  const reply = (frame: Buffer, request: TrapRequest): Buffer => {
    const { unit, functionCode: code, address, quantity } = request;
    if (code === 3 || code === 4) {
      const pdu = Buffer.alloc(2 + 2 * quantity);
      pdu[0] = code;
      pdu[1] = 2 * quantity;
      for (let i = 0; i < quantity; i += 1) pdu.writeUInt16BE(registers.get(`${unit}:${address + i}`) ?? truthOf(unit, address + i), 2 + 2 * i);
      return encodeRtuFrame(unit, pdu);
    }
    if (code === 1 || code === 2) {
      const pdu = Buffer.alloc(2 + Math.ceil(quantity / 8));
      pdu[0] = code;
      pdu[1] = pdu.length - 2;
      for (let i = 0; i < quantity; i += 1) if (coils.get(`${unit}:${address + i}`)) pdu[2 + (i >> 3)] |= 1 << (i & 7);
      return encodeRtuFrame(unit, pdu);
    }
    if (code === 6) registers.set(`${unit}:${address}`, frame.readUInt16BE(4));
    if (code === 5) coils.set(`${unit}:${address}`, frame.readUInt16BE(4) === 0xff00);
    if (code === 16) for (let i = 0; i < quantity; i += 1) registers.set(`${unit}:${address + i}`, frame.readUInt16BE(7 + 2 * i));
    if (code === 15) for (let i = 0; i < quantity; i += 1) coils.set(`${unit}:${address + i}`, ((frame[7 + (i >> 3)] as number) >> (i & 7) & 1) === 1);
    return encodeRtuFrame(unit, frame.subarray(1, 6)); // writes echo function, address and value/quantity
  };
  let pending = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    for (;;) {
      if (pending[0] === 0x23) { // '#': a raw line of a custom data stream
        const end = pending.indexOf(0x0a);
        if (end < 0) return;
        peer.rawRequests.push(Buffer.from(pending.subarray(0, end + 1)));
        pending = pending.subarray(end + 1);
        if (options.raw) sendAfter(options.raw.reply, options.raw.afterMs);
        continue;
      }
      const length = requestLength(pending);
      if (length === undefined || (length > 0 && pending.length < length)) return;
      if (length === 0 || crc16(pending, 0, length - 2) !== pending.readUInt16LE(length - 2)) {
        pending = pending.subarray(1);
        continue;
      }
      const frame = pending.subarray(0, length);
      pending = pending.subarray(length);
      const code = frame[1] as number;
      const request: TrapRequest = {
        unit: frame[0] as number, functionCode: code, address: frame.readUInt16BE(2),
        quantity: code === 5 || code === 6 ? 1 : frame.readUInt16BE(4), at: Date.now(),
      };
      const index = peer.requests.push(request) - 1;
      const answer = peer.answer(request, index);
      if (answer === 'silent') continue;
      const replied = answer.valuesOf === undefined ? request : { ...request, address: answer.valuesOf };
      const bytes = answer.exception === undefined ? reply(frame, replied) : encodeRtuFrame(request.unit, Buffer.from([code | 0x80, answer.exception]));
      sendAfter(bytes, answer.afterMs);
    }
  };
  line = await openSerialLine(path, { baud: 19200, parity: 'even', dataBits: 8, stopBits: 1 }, {
    onError: () => undefined, onClose: () => undefined, onData,
  });
  return peer;
}
