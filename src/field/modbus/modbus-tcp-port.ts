// Modbus TCP as a port for modbus-serial's client (its public constructor takes any port object),
// in place of the library's TcpPort, which wraps transaction ids at 256 and matches replies by id
// alone. This port owns the socket, the MBAP framing and the transaction ids (the full 16-bit
// range), and hands the client only a frame that is exactly the awaited answer (protocol 0,
// awaited transaction id, same unit, function code or its exception, exact PDU length).
//
// The client files each request under the port's `_transactionIdWrite` before writing it, and
// looks up a reply under `_transactionIdRead`: that is the whole port contract it reads. Those are
// fields of this class, kept as small "slots" (a few in flight, never 256), so the client's table
// of transactions stays small; the id on the wire is separate and runs through 0..65535.
import { EventEmitter } from 'node:events';
import { Socket } from 'node:net';
import { encodeRtuFrame } from '../../core/modbus/rtu-frame.js';
import { type MbapFrame, MbapFramer } from '../../core/modbus/mbap-framer.js';
import { type ExpectedReply, pduMismatch } from '../../core/modbus/reply-check.js';
import { FOREIGN_TRANSACTION_ID } from './transport-types.js';

export interface TcpPortEvents {
  /** A frame was dropped; the request it might have answered keeps waiting. */
  onDiscard(reason: string): void;
  /** The stream lost its frame boundaries: the connection must be dropped. */
  onDesync(reason: string): void;
}

/** Transaction ids on the wire: 16 bits. */
export const WIRE_TRANSACTION_IDS = 0x10000;
/** Keys of the client's transaction table: more than the most requests ever in flight (64). */
const CLIENT_SLOTS = 256;
const MBAP_HEADER_BYTES = 7;
const CRC_BYTES = 2;

interface Awaited {
  reply: ExpectedReply;
  slot: number;
}

export class ModbusTcpPort extends EventEmitter {
  private readonly framer = new MbapFramer();
  private readonly awaited = new Map<number, Awaited>();
  private readonly socket = new Socket();
  private openFlag = false;
  private nextWireId: number;
  private writeSlot = 1;
  /** The wire id of the next write, taken by expect(). */
  private nextWrite: number | undefined;

  /** modbus-serial's client files the request it is about to write under this key (port contract). */
  get _transactionIdWrite(): number {
    return this.writeSlot;
  }
  /** The client's open() resets it to 1; the slots are this port's to choose. */
  set _transactionIdWrite(_ignored: number) {}
  /** modbus-serial's client takes a reply for the transaction filed under this key (port contract). */
  _transactionIdRead = 0;

  constructor(private readonly host: string, private readonly tcpPort: number,
    private readonly events: TcpPortEvents, firstWireId = 1) {
    super();
    this.nextWireId = firstWireId % WIRE_TRANSACTION_IDS;
    this.socket.on('data', (chunk: Buffer) => this.receive(chunk));
    this.socket.on('close', () => {
      const wasOpen = this.openFlag;
      this.openFlag = false;
      this.framer.reset();
      this.awaited.clear();
      if (wasOpen) this.emit('close');
    });
    this.socket.on('error', (err: Error) => {
      if (this.openFlag) this.emit('error', err);
    });
  }

  get isOpen(): boolean {
    return this.openFlag;
  }

  open(callback: (err?: Error) => void): void {
    const onError = (err: Error) => callback(err);
    this.socket.once('error', onError);
    this.socket.connect({ host: this.host, port: this.tcpPort }, () => {
      this.socket.off('error', onError);
      this.socket.setNoDelay(true);
      this.openFlag = true;
      callback();
    });
  }

  close(callback?: (err?: Error) => void): void {
    this.destroy(callback);
  }

  destroy(callback?: (err?: Error) => void): void {
    if (this.socket.destroyed) {
      callback?.();
      return;
    }
    if (callback) this.socket.once('close', () => callback());
    this.socket.destroy();
  }

  /** Call just before the client writes the request: returns the transaction id it will carry. */
  expect(reply: ExpectedReply): number {
    const wireId = this.nextWireId;
    this.nextWireId = (wireId + 1) % WIRE_TRANSACTION_IDS;
    this.writeSlot = (this.writeSlot + 1) % CLIENT_SLOTS;
    this.awaited.set(wireId, { reply, slot: this.writeSlot });
    this.nextWrite = wireId;
    return wireId;
  }

  /** The request ended (answered, timed out or failed): a reply arriving later is foreign. */
  settle(transactionId: number): void {
    this.awaited.delete(transactionId);
  }

  /** Bytes of a frame begun but not finished: after a timeout this means the stream is misaligned. */
  get pendingBytes(): number {
    return this.framer.pendingBytes;
  }

  /** The client's request as an RTU-shaped frame (unit, PDU, CRC): sent with an MBAP header. */
  write(frame: Buffer): void {
    const wireId = this.nextWrite;
    this.nextWrite = undefined;
    // Only a request announced by expect() goes out: its reply is the only one that can match.
    if (wireId === undefined || frame.length < 2 + CRC_BYTES || !this.openFlag) return;
    const body = frame.subarray(0, frame.length - CRC_BYTES); // unit + PDU
    const adu = Buffer.allocUnsafe(MBAP_HEADER_BYTES - 1 + body.length);
    adu.writeUInt16BE(wireId, 0);
    adu.writeUInt16BE(0, 2);
    adu.writeUInt16BE(body.length, 4);
    body.copy(adu, MBAP_HEADER_BYTES - 1);
    this.socket.write(adu);
  }

  private receive(chunk: Buffer): void {
    for (const event of this.framer.push(chunk)) {
      if (event.kind === 'desync') this.events.onDesync(event.reason);
      else this.deliver(event.frame);
    }
  }

  private deliver(frame: MbapFrame): void {
    const problem = this.mismatch(frame);
    if (problem !== undefined) {
      this.events.onDiscard(problem);
      return;
    }
    const awaited = this.awaited.get(frame.transactionId) as Awaited;
    this.awaited.delete(frame.transactionId);
    this._transactionIdRead = awaited.slot;
    this.emit('data', encodeRtuFrame(frame.unit, frame.pdu));
  }

  private mismatch(frame: MbapFrame): string | undefined {
    if (frame.protocolId !== 0) return `protocol id ${frame.protocolId}`;
    const awaited = this.awaited.get(frame.transactionId);
    if (!awaited) return `${FOREIGN_TRANSACTION_ID} ${frame.transactionId} not awaited (late, duplicate or foreign)`;
    if (frame.unit !== awaited.reply.unit) return `unit ${frame.unit} (expected ${awaited.reply.unit})`;
    return pduMismatch(awaited.reply, frame.pdu);
  }
}
