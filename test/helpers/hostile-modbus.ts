// Hostile Modbus peers, scriptable at run time: a raw Modbus TCP server (node net on 127.0.0.1,
// ephemeral port) and a raw RTU writer on a pty. Both serve FC3 reads for two units on one line or
// connection: a healthy unit that always answers the truth, and a hostile unit that misbehaves
// in the current mode. Every wrong value they send is 0xBAD0, so a value that is not the truth
// reached the master only if the master decoded a reply it should have discarded.
import { createServer, type Server, type Socket } from 'node:net';
import { crc16, encodeRtuFrame } from '../../src/core/modbus/rtu-frame.js';
import { openSerialLine, type SerialLine } from '../../packages/simulator/src/serial-line.js';
import { isSlowMode, type SlowAction, type SlowMode, slowAction, type SlowState, slowState } from './hostile-slow.js';

export const TCP_ATTACKS = [
  'truncated', 'oversized', 'short-count', 'wrong-unit', 'wrong-function', 'wrong-protocol', 'wrong-transaction',
  'late', 'duplicate', 'noise', 'slow',
] as const;
export const RTU_ATTACKS = [
  'truncated', 'oversized', 'short-count', 'wrong-unit', 'wrong-function', 'wrong-crc', 'late', 'duplicate', 'noise', 'slow',
  'foreign-ahead', 'duplicate-late',
] as const;
export type Attack = (typeof TCP_ATTACKS)[number] | (typeof RTU_ATTACKS)[number];
/** The hostile unit answers reads of up to LONGEST_ANSWERED_READ registers and ignores longer ones (a length-limited meter). */
export const LONG_READS_SILENT = 'long-reads-silent';
export const LONGEST_ANSWERED_READ = 4;
export type PeerMode = Attack | SlowMode | typeof LONG_READS_SILENT | 'good';

export const BAD = 0xbad0;
/** The value register `address` of `unit` really holds. */
export const truth = (unit: number, address: number): number => (unit * 1000 + address) & 0xffff;

export interface HostilePeer {
  mode: PeerMode;
  /** While true no unit answers anything (connections are still accepted). */
  muted: boolean;
  /** Reads of the hostile unit served so far (in whatever mode). */
  readonly hostileReads: number;
  /** 127.0.0.1 port (TCP) or the pty path the master opens (RTU). */
  readonly endpoint: string | number;
  stop(): Promise<void>;
}

interface PeerSetup {
  healthyUnit: number;
  hostileUnit: number;
  /** The master's timeout: 'late' answers after it, 'slow' within it. */
  timeoutMs: number;
  /** How long after the request the slow modes (late-silent ...) answer late; default timeoutMs + 30. */
  lateMs?: number;
  /** LONG_READS_SILENT: the longest read the hostile unit answers (default LONGEST_ANSWERED_READ). */
  longestAnsweredRead?: number;
}

interface Read {
  unit: number;
  start: number;
  count: number;
  transactionId: number;
}

function readPdu(start: number, count: number, value: (address: number) => number, code = 3): Buffer {
  const pdu = Buffer.alloc(2 + 2 * count);
  pdu[0] = code;
  pdu[1] = 2 * count;
  for (let i = 0; i < count; i += 1) pdu.writeUInt16BE(value(start + i), 2 + 2 * i);
  return pdu;
}

const good = (req: Read) => readPdu(req.start, req.count, (a) => truth(req.unit, a));
const bad = (req: Read, count = req.count, code = 3) => readPdu(req.start, count, () => BAD, code);

/**
 * Byte count smaller than asked, padded to the full length so only the count tells (one register
 * short: a read of one register gets a count of 0, never a well-formed reply with a wrong value).
 */
function shortCountPdu(req: Read): Buffer {
  const pdu = Buffer.alloc(2 + 2 * req.count);
  pdu[0] = 3;
  pdu[1] = 2 * req.count - 2;
  pdu.writeUInt16BE(BAD, 2);
  return pdu;
}

let seed = 12345;
function noise(length: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i += 1) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    bytes[i] = seed & 0xff;
  }
  return bytes;
}

function mbap(transactionId: number, unit: number, pdu: Buffer, options: { protocolId?: number; length?: number } = {}): Buffer {
  const header = Buffer.alloc(7);
  header.writeUInt16BE(transactionId & 0xffff, 0);
  header.writeUInt16BE(options.protocolId ?? 0, 2);
  header.writeUInt16BE(options.length ?? pdu.length + 1, 4);
  header[6] = unit;
  return Buffer.concat([header, pdu]);
}

type Send = (bytes: Buffer, afterMs?: number) => void;

/** The frame (in the peer's framing) for a slow mode's action: wrong values when late. */
function sendSlow(action: SlowAction, frame: (pdu: Buffer) => Buffer, req: Read, send: Send): void {
  switch (action.kind) {
    case 'ignore': return;
    case 'good': return send(frame(good(req)));
    case 'late': return send(frame(bad(req)), action.afterMs);
    case 'exception': return send(frame(Buffer.from([0x83, action.code])));
  }
}

const lateMsOf = (setup: PeerSetup) => setup.lateMs ?? setup.timeoutMs + 30;

/** A muted peer hears nothing; a length-limited unit nothing longer than it serves. */
function silentOn(mode: PeerMode | 'muted', req: Read, setup: PeerSetup): boolean {
  return mode === 'muted' || (mode === LONG_READS_SILENT && req.count > (setup.longestAnsweredRead ?? LONGEST_ANSWERED_READ));
}

interface PeerControl { mode: PeerMode; muted: boolean; hostileReads: number }

/** The mode a read of `unit` is answered in; the hostile unit's reads are counted. */
function modeFor(peer: PeerControl, unit: number, setup: PeerSetup): PeerMode | 'muted' {
  if (peer.muted) return 'muted';
  if (unit !== setup.hostileUnit) return 'good';
  peer.hostileReads += 1;
  return peer.mode;
}

/** What the hostile unit of a TCP peer sends for one read. */
function tcpReply(mode: PeerMode | 'muted', req: Read, setup: PeerSetup, send: Send, state: SlowState): void {
  const tid = req.transactionId;
  const unit = req.unit;
  if (silentOn(mode, req, setup)) return;
  if (isSlowMode(mode)) return sendSlow(slowAction(mode, state, lateMsOf(setup), Date.now()), (pdu) => mbap(tid, unit, pdu), req, send);
  switch (mode) {
    case 'good': return send(mbap(tid, unit, good(req)));
    case 'truncated': return send(mbap(tid, unit, bad(req), { length: good(req).length + 21 }));
    case 'oversized': return send(Buffer.concat([mbap(tid, unit, bad(req), { length: 65535 }), noise(64)]));
    case 'short-count': return send(mbap(tid, unit, shortCountPdu(req)));
    case 'wrong-unit': return send(mbap(tid, setup.healthyUnit, bad(req)));
    case 'wrong-function': return send(mbap(tid, unit, bad(req, req.count, 4)));
    case 'wrong-protocol': return send(mbap(tid, unit, bad(req), { protocolId: 5 }));
    case 'wrong-transaction': return send(mbap(tid + 1, unit, bad(req)));
    case 'late': return send(mbap(tid, unit, bad(req)), setup.timeoutMs + 30);
    case 'duplicate':
      send(mbap(tid, unit, good(req)));
      return send(mbap(tid, unit, bad(req)));
    case 'noise':
      send(noise(13));
      return send(mbap(tid, unit, bad(req)));
    case 'slow': {
      const frame = mbap(tid, unit, good(req));
      const delay = Math.floor(setup.timeoutMs * 0.4);
      send(frame.subarray(0, 5), delay);
      return send(frame.subarray(5), delay + 20);
    }
    default: return send(mbap(tid, unit, good(req)));
  }
}

/** What the hostile unit of an RTU peer sends for one read. */
function rtuReply(mode: PeerMode | 'muted', req: Read, setup: PeerSetup, send: Send, state: SlowState): void {
  const unit = req.unit;
  if (silentOn(mode, req, setup)) return;
  if (isSlowMode(mode)) return sendSlow(slowAction(mode, state, lateMsOf(setup), Date.now()), (pdu) => encodeRtuFrame(unit, pdu), req, send);
  switch (mode) {
    case 'good': return send(encodeRtuFrame(unit, good(req)));
    case 'truncated': {
      const frame = encodeRtuFrame(unit, bad(req));
      return send(frame.subarray(0, Math.ceil(frame.length / 2)));
    }
    case 'oversized': return send(encodeRtuFrame(unit, bad(req, Math.min(125, req.count + 4))));
    case 'short-count': return send(encodeRtuFrame(unit, shortCountPdu(req)));
    case 'wrong-unit': return send(encodeRtuFrame(setup.healthyUnit, bad(req)));
    case 'wrong-function': return send(encodeRtuFrame(unit, bad(req, req.count, 4)));
    case 'wrong-crc': {
      const frame = encodeRtuFrame(unit, bad(req));
      frame[frame.length - 1] = (frame[frame.length - 1] as number) ^ 0xff;
      return send(frame);
    }
    case 'late': return send(encodeRtuFrame(unit, bad(req)), setup.timeoutMs + 30);
    case 'duplicate':
      send(encodeRtuFrame(unit, good(req)));
      return send(encodeRtuFrame(unit, bad(req)), 1);
    case 'noise':
      send(Buffer.concat([noise(7), encodeRtuFrame(unit, good(req))]));
      return send(noise(9), 1);
    case 'duplicate-late': // the copy comes after the master's quiet window, between exchanges
      send(encodeRtuFrame(unit, good(req)));
      return send(encodeRtuFrame(unit, bad(req)), 15);
    case 'foreign-ahead': // another unit's frame (a late reply) just ahead of the right one
      return send(Buffer.concat([encodeRtuFrame(setup.healthyUnit, bad(req)), encodeRtuFrame(unit, good(req))]));
    case 'slow': {
      const frame = encodeRtuFrame(unit, good(req));
      const delay = Math.floor(setup.timeoutMs * 0.4);
      send(frame.subarray(0, 3), delay);
      return send(frame.subarray(3), delay + 15);
    }
    default: return send(encodeRtuFrame(unit, good(req)));
  }
}

function scheduler(write: (bytes: Buffer) => void, timers: Set<NodeJS.Timeout>): Send {
  return (bytes, afterMs) => {
    if (afterMs === undefined) return write(bytes);
    const timer = setTimeout(() => {
      timers.delete(timer);
      write(bytes);
    }, afterMs);
    timers.add(timer);
  };
}

/** A TCP server on 127.0.0.1 (ephemeral port) whose connections each get `serve(socket, send)`. */
async function startTcpPeer(serve: (socket: Socket, send: Send) => void): Promise<HostilePeer & PeerControl> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    serve(socket, scheduler((bytes) => { if (!socket.destroyed) socket.write(bytes); }, timers));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    mode: 'good', muted: false, hostileReads: 0,
    endpoint: typeof address === 'object' && address ? address.port : 0,
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function startHostileTcpPeer(setup: PeerSetup): Promise<HostilePeer> {
  const peer = await startTcpPeer((socket, send) => {
    const state = slowState();
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 12) {
        const length = pending.readUInt16BE(4);
        const frame = pending.subarray(0, 6 + length);
        if (frame.length < 6 + length) break;
        pending = pending.subarray(6 + length);
        const req: Read = { transactionId: frame.readUInt16BE(0), unit: frame[6] as number, start: frame.readUInt16BE(8), count: frame.readUInt16BE(10) };
        if (frame[7] !== 3) continue;
        tcpReply(modeFor(peer, req.unit, setup), req, setup, send, state);
      }
    });
  });
  return peer;
}

/** The RTU side of a peer: FC3 requests in, replies out through `send` (one line, one state). */
function rtuRequestHandler(setup: PeerSetup, peer: PeerControl, send: Send): (chunk: Buffer) => void {
  const state = slowState();
  let pending = Buffer.alloc(0);
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 8) {
      const frame = pending.subarray(0, 8);
      if (crc16(frame, 0, 6) !== frame.readUInt16LE(6) || frame[1] !== 3) {
        pending = pending.subarray(1); // not a read request at this offset: resynchronise
        continue;
      }
      pending = pending.subarray(8);
      const req: Read = { transactionId: 0, unit: frame[0] as number, start: frame.readUInt16BE(2), count: frame.readUInt16BE(4) };
      if (req.unit !== setup.healthyUnit && req.unit !== setup.hostileUnit) continue;
      rtuReply(modeFor(peer, req.unit, setup), req, setup, send, state);
    }
  };
}

/** RTU frames through a TCP serial server (127.0.0.1, ephemeral port), as `rtu-over-tcp` buses talk. */
export async function startHostileRtuOverTcpPeer(setup: PeerSetup): Promise<HostilePeer> {
  const peer = await startTcpPeer((socket, send) => socket.on('data', rtuRequestHandler(setup, peer, send)));
  return peer;
}

/** Serves the far end of a pty pair (`path`: the end the master does not open). */
export async function startHostileRtuPeer(setup: PeerSetup, path: string): Promise<HostilePeer> {
  const timers = new Set<NodeJS.Timeout>();
  const peer: PeerControl = { mode: 'good', muted: false, hostileReads: 0 };
  let line: SerialLine | undefined;
  const onData = rtuRequestHandler(setup, peer, scheduler((bytes) => line?.write(bytes), timers));
  line = await openSerialLine(path, { baud: 19200, parity: 'even', dataBits: 8, stopBits: 1 }, {
    onError: () => undefined,
    onClose: () => undefined,
    onData,
  });
  return Object.assign(peer, {
    endpoint: path,
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      await line?.close();
    },
  });
}
