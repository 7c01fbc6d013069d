// Modbus TCP reply matching, in place of modbus-serial's own MBAP parsing (which ignores the
// protocol id, trusts any length and matches replies by transaction id alone). Only a frame that is
// exactly the awaited answer (protocol 0, awaited transaction id, same unit, function code or its
// exception, exact PDU length) is handed to modbus-serial; anything else is discarded and reported.
import { EventEmitter } from 'node:events';
import { Socket } from 'node:net';
import { encodeRtuFrame } from '../../core/modbus/rtu-frame.js';
import { type MbapFrame, MbapFramer } from '../../core/modbus/mbap-framer.js';
import { type ExpectedReply, pduMismatch } from '../../core/modbus/reply-check.js';

export interface ReplyGuardEvents {
  /** A frame was dropped; the request it might have answered keeps waiting. */
  onDiscard(reason: string): void;
  /** The stream lost its frame boundaries: the connection must be dropped. */
  onDesync(reason: string): void;
}

/** Transaction ids wrap at 256 in modbus-serial's TCP port. */
const TRANSACTION_IDS = 256;

export class TcpReplyGuard {
  private readonly framer = new MbapFramer();
  private readonly awaited = new Map<number, ExpectedReply>();

  private constructor(
    private readonly port: EventEmitter, private readonly socket: Socket, private readonly events: ReplyGuardEvents,
  ) {}

  /** Takes over the socket's 'data' events of a modbus-serial TCP port; undefined if its shape is unknown. */
  static install(port: unknown, events: ReplyGuardEvents): TcpReplyGuard | undefined {
    if (!(port instanceof EventEmitter)) return undefined;
    const socket: unknown = Reflect.get(port, '_client');
    if (!(socket instanceof Socket) || typeof Reflect.get(port, '_transactionIdWrite') !== 'number') return undefined;
    const guard = new TcpReplyGuard(port, socket, events);
    socket.removeAllListeners('data');
    socket.on('data', (chunk: Buffer) => guard.receive(chunk));
    return guard;
  }

  /** Call just before the request is written: returns the transaction id it will carry. */
  expect(reply: ExpectedReply): number {
    const id = Number(Reflect.get(this.port, '_transactionIdWrite')) % TRANSACTION_IDS;
    this.awaited.set(id, reply);
    return id;
  }

  /** The request ended (answered, timed out or failed): a reply arriving later is foreign. */
  settle(transactionId: number): void {
    this.awaited.delete(transactionId);
  }

  /**
   * Drops the connection the way a peer would: modbus-serial then reports it closed, the
   * transport fails what is pending and the bus reopens (closing through the client would not).
   */
  disconnect(): void {
    this.framer.reset();
    this.socket.destroy();
  }

  /** Bytes of a frame begun but not finished: after a timeout this means the stream is misaligned. */
  get pendingBytes(): number {
    return this.framer.pendingBytes;
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
    this.awaited.delete(frame.transactionId);
    // modbus-serial's reply parser expects an RTU-shaped frame (unit, PDU, CRC) and the id read.
    Reflect.set(this.port, '_transactionIdRead', frame.transactionId);
    this.port.emit('data', encodeRtuFrame(frame.unit, frame.pdu));
  }

  private mismatch(frame: MbapFrame): string | undefined {
    if (frame.protocolId !== 0) return `protocol id ${frame.protocolId}`;
    const expected = this.awaited.get(frame.transactionId);
    if (!expected) return `transaction id ${frame.transactionId} not awaited (late, duplicate or foreign)`;
    if (frame.unit !== expected.unit) return `unit ${frame.unit} (expected ${expected.unit})`;
    return pduMismatch(expected, frame.pdu);
  }
}
