// Modbus TCP (MBAP) server for the simulator: many connections, pipelined requests on one
// connection answered in the order they came (a dropped request simply gets no answer).
import type net from 'node:net';
import type { Logger } from 'fieldgate/workspace-kit';
import { encodeMbapFrame, splitMbapFrame } from './frames.js';
import type { Simulator } from './simulator.js';
import { listenTcp, type ConnectionHandler, type TcpListener } from './tcp-listener.js';

export interface ModbusTcpServerOptions {
  simulator: Simulator;
  logger: Logger;
  host?: string;
  /** 0 (default) = pick a free port; read it back from `port`. */
  port?: number;
}

/** Requests waiting for their turn on one connection; beyond this the connection is dropped. */
const MAX_PIPELINED = 512;

interface Slot {
  ready: boolean;
  reply: Buffer | undefined;
}

export async function startModbusTcpServer(options: ModbusTcpServerOptions): Promise<TcpListener> {
  const logger = options.logger.child({ transport: 'tcp' });
  return listenTcp(options.host ?? '127.0.0.1', options.port ?? 0, logger, (socket) =>
    new MbapConnection(socket, options.simulator, logger));
}

class MbapConnection implements ConnectionHandler {
  private buffer: Buffer = Buffer.alloc(0);
  private readonly slots: Slot[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(
    private readonly socket: net.Socket,
    private readonly simulator: Simulator,
    private readonly logger: Logger,
  ) {}

  onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const split = splitMbapFrame(this.buffer);
      if (split.kind === 'need-more') break;
      if (split.kind === 'invalid') {
        // A TCP stream cannot be resynchronised: drop the connection like real devices do.
        this.logger.warn({ reason: split.reason }, 'malformed MBAP frame, closing connection');
        this.socket.destroy();
        return;
      }
      this.buffer = split.rest;
      if (this.slots.length >= MAX_PIPELINED) {
        this.logger.warn({ pending: this.slots.length }, 'too many pipelined requests, closing connection');
        this.socket.destroy();
        return;
      }
      this.request(split.header.transactionId, split.header.unit, Buffer.from(split.pdu));
    }
  }

  onClose(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private request(transactionId: number, unit: number, pdu: Buffer): void {
    const outcome = this.simulator.handle(unit, pdu);
    const slot: Slot = { ready: false, reply: undefined };
    this.slots.push(slot);
    if (outcome.kind === 'drop') {
      slot.ready = true;
    } else {
      // Over TCP there is no CRC to break: a garbled reply carries a transaction id the master never sent.
      const tid = outcome.garble ? transactionId ^ 0x8000 : transactionId;
      slot.reply = encodeMbapFrame(tid, unit, outcome.pdu);
      if (outcome.delayMs > 0) {
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          slot.ready = true;
          this.flush();
        }, outcome.delayMs);
        this.timers.add(timer);
        return;
      }
      slot.ready = true;
    }
    this.flush();
  }

  private flush(): void {
    while (this.slots.length > 0 && this.slots[0].ready) {
      const slot = this.slots.shift() as Slot;
      if (slot.reply !== undefined && !this.closed && this.socket.writable) this.socket.write(slot.reply);
    }
  }
}
