// The Modbus TCP server of a bus share, on node:net: accepts up to `maxClients` connections
// (more are closed at once), cuts each stream into MBAP frames, and writes the answers in the
// order the requests came. A stream that cannot be trusted (a length Modbus does not allow, a
// foreign protocol id), a client idle for `idleTimeoutMs`, or one that does not read its answers
// (more than `maxUnreadBytes` waiting to be sent or held for an earlier answer) is closed, logged
// once per client. What a request means is the handler's business.
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from '../core/logger.js';
import { type MbapFrame, MbapFramer } from '../core/modbus/mbap-framer.js';
import { mbapFrame } from '../core/modbus/mbap-request.js';
import { OrderedAnswers } from '../field/modbus/ordered-answers.js';

export interface ShareClient {
  readonly id: number;
  /** "address:port" of the client. */
  readonly remote: string;
}

export interface ShareRequestHandler {
  /**
   * One request frame (protocol id 0); `answer` sends a PDU back framed with its transaction and
   * unit, after the answers of the client's earlier requests.
   */
  request(client: ShareClient, frame: MbapFrame, answer: (pdu: Buffer) => void): void;
  closed(client: ShareClient): void;
}

export interface ShareServerOptions {
  address: string;
  /** 0 picks a free port (tests). */
  port: number;
  maxClients: number;
  idleTimeoutMs: number;
  /** Answers waiting for a client that does not read (or held for an earlier answer): beyond this it is closed. */
  maxUnreadBytes?: number;
  handler: ShareRequestHandler;
  log: Logger;
}

const DEFAULT_MAX_UNREAD_BYTES = 64 * 1024;

export class ShareServer {
  private server: Server | undefined;
  private readonly sockets = new Map<Socket, ShareClient>();
  private nextId = 1;
  private refusing = false;
  /** Connections closed at once because `maxClients` were connected. */
  refusedConnections = 0;

  constructor(private readonly options: ShareServerOptions) {}

  get clients(): number {
    return this.sockets.size;
  }

  /** The port listened on (after listen()). */
  get port(): number {
    const address = this.server?.address();
    return typeof address === 'object' && address !== null ? address.port : this.options.port;
  }

  listen(): Promise<void> {
    const server = createServer((socket) => this.accept(socket));
    this.server = server;
    return new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.address, () => {
        server.off('error', reject);
        server.on('error', (err) => this.options.log.error({ err }, 'share server error'));
        resolve();
      });
    });
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets.keys()) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    const { maxClients, log } = this.options;
    if (this.sockets.size >= maxClients) {
      this.refusedConnections += 1;
      if (!this.refusing) {
        this.refusing = true;
        log.warn({ maxClients, remote: remoteOf(socket) }, 'share full: further clients are closed at once');
      }
      socket.destroy();
      return;
    }
    if (this.refusing) {
      this.refusing = false;
      log.info({ clients: this.sockets.size, refused: this.refusedConnections }, 'share accepts clients again');
    }
    const client: ShareClient = { id: this.nextId++, remote: remoteOf(socket) };
    this.sockets.set(socket, client);
    const framer = new MbapFramer();
    let closedWhy: string | undefined;
    const closeFor = (reason: string, fields: Record<string, unknown> = {}) => {
      if (closedWhy) return;
      closedWhy = reason;
      log.warn({ client: client.remote, reason, ...fields }, 'share client closed');
      socket.destroy();
    };
    const maxUnread = this.options.maxUnreadBytes ?? DEFAULT_MAX_UNREAD_BYTES;
    const answers = new OrderedAnswers((bytes) => {
      if (socket.destroyed || closedWhy) return;
      socket.write(bytes);
      if (socket.writableLength > maxUnread) closeFor('does not read its answers', { unreadBytes: socket.writableLength });
    });
    socket.setNoDelay(true);
    socket.setTimeout(this.options.idleTimeoutMs, () => closeFor('idle', { idleTimeoutMs: this.options.idleTimeoutMs }));
    socket.on('data', (chunk: Buffer) => {
      for (const event of framer.push(chunk)) {
        if (closedWhy) return;
        if (event.kind === 'desync') return closeFor('unframeable stream', { detail: event.reason });
        const { frame } = event;
        if (frame.protocolId !== 0) return closeFor('not Modbus', { protocolId: frame.protocolId });
        const answer = answers.slot();
        this.options.handler.request(client, frame, (pdu) => {
          if (socket.destroyed || closedWhy) return;
          answer(mbapFrame(frame.transactionId, frame.unit, pdu));
          // A client pipelining without end behind one slow request: its answers would pile up here.
          if (answers.heldBytes > maxUnread) closeFor('too many answers held behind an earlier one', { heldBytes: answers.heldBytes });
        });
      }
    });
    socket.on('error', () => undefined); // a reset by the client ends in 'close' too
    socket.on('close', () => {
      this.sockets.delete(socket);
      this.options.handler.closed(client);
    });
  }
}

function remoteOf(socket: Socket): string {
  return `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
}
