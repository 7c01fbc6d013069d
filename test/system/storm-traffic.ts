// Share traffic of the reload storm (reload-storm.test.ts): clients that keep pipelined reads in
// the bus queue (some for the whole storm, reconnecting whenever the share drops them, some that
// connect, send and leave without end); the page's readers are in storm-page-readers.ts. Every
// value that comes back is checked against the simulated device:
// each unit counts up from its own start, so an answer is wrong when it is below that start,
// above the device's count at the moment it arrives, below an earlier answer of the same unit on
// the same connection, or an answer to another request than the next one sent.
import { connect, type Socket } from 'node:net';
import { mbap } from '../helpers/share-clients.js';

/** The counter a unit holds at holding 5..6 (uint32): where it starts and what it is now. */
export interface Counter {
  start(unit: number): number;
  now(unit: number): number;
}

export interface ShareFigures {
  connections: number;
  refusedConnections: number;
  sent: number;
  /** Answered with the registers asked. */
  values: number;
  /** Answered with an exception, by code (6 busy, 10 path unavailable, 11 no response). */
  exceptions: Record<number, number>;
  /** Sent and never answered: the connection closed first (the client left, or the share restarted). */
  cutOff: number;
}

const READ_PDU = [3, 0, 5, 0, 2];

/** One client connection: reads of holding 5..6 of the units asked, each answer checked on arrival. */
class ShareConnection {
  private readonly pending: Array<{ tid: number; unit: number }> = [];
  private readonly last = new Map<number, number>();
  private buffered = Buffer.alloc(0);
  private nextTid = 1;
  readonly closed: Promise<void>;

  constructor(readonly socket: Socket, private readonly traffic: ShareTraffic, private readonly onAnswer: (ok: boolean) => void) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.received(chunk));
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => socket.once('close', () => {
      traffic.figures.cutOff += this.pending.length;
      this.pending.length = 0;
      resolve();
    }));
  }

  get unanswered(): number {
    return this.pending.length;
  }

  /** `units.length` pipelined reads in one write. */
  send(units: readonly number[]): void {
    if (this.socket.destroyed) return;
    const frames = units.map((unit) => {
      const tid = this.nextTid;
      this.nextTid = (this.nextTid % 0xffff) + 1;
      this.pending.push({ tid, unit });
      return mbap(tid, unit, READ_PDU);
    });
    this.traffic.figures.sent += units.length;
    this.socket.write(Buffer.concat(frames));
  }

  private received(chunk: Buffer): void {
    this.buffered = Buffer.concat([this.buffered, chunk]);
    while (this.buffered.length >= 6) {
      const end = 6 + this.buffered.readUInt16BE(4);
      if (this.buffered.length < end) return;
      this.answer(this.buffered.subarray(0, end));
      this.buffered = this.buffered.subarray(end);
    }
  }

  private answer(frame: Buffer): void {
    const asked = this.pending.shift();
    const { figures, wrong, counter } = this.traffic;
    const tid = frame.readUInt16BE(0);
    if (!asked || tid !== asked.tid || frame[6] !== asked.unit) {
      wrong.push(`answer ${tid} unit ${frame[6]} where ${asked ? `${asked.tid} unit ${asked.unit}` : 'nothing'} was awaited`);
      return this.onAnswer(false);
    }
    if (frame[7] === 0x83 && frame.length === 9) {
      figures.exceptions[frame[8]!] = (figures.exceptions[frame[8]!] ?? 0) + 1;
      return this.onAnswer(false);
    }
    if (frame[7] !== 3 || frame[8] !== 4 || frame.length !== 13) {
      wrong.push(`unit ${asked.unit}: answer ${frame.subarray(7).toString('hex')} to a read of 2 registers`);
      return this.onAnswer(false);
    }
    const value = frame.readUInt32BE(9);
    const deviceNow = counter.now(asked.unit);
    const before = this.last.get(asked.unit) ?? counter.start(asked.unit);
    if (value < before || value > deviceNow) {
      wrong.push(`unit ${asked.unit}: ${value} after ${before} on this connection, the device counts ${deviceNow}`);
    }
    this.last.set(asked.unit, Math.max(before, value));
    figures.values += 1;
    this.onAnswer(true);
  }
}

export class ShareTraffic {
  readonly figures: ShareFigures = { connections: 0, refusedConnections: 0, sent: 0, values: 0, exceptions: {}, cutOff: 0 };
  readonly wrong: string[] = [];
  private running = true;
  private readonly loops: Promise<void>[] = [];

  constructor(private readonly port: number, readonly counter: Counter, private readonly units: readonly number[]) {}

  /** Clients that keep `depth` reads outstanding for the whole storm, reconnecting when dropped. */
  keepQueued(clients: number, depth: number): void {
    for (let c = 0; c < clients; c += 1) this.loops.push(this.loop(async (connection) => {
      let turn = c;
      const unit = () => this.units[turn++ % this.units.length]!;
      connection.send(Array.from({ length: depth }, unit));
      const onAnswer = (ok: boolean) => {
        if (!this.running) return;
        // A busy or refused answer comes at once: a pause, or the client would spin on it.
        if (ok) connection.send([unit()]);
        else setTimeout(() => { if (this.running) connection.send([unit()]); }, 20);
      };
      return { onAnswer, done: connection.closed };
    }));
  }

  /** Clients that connect, send `depth` pipelined reads and leave after 0..`stayMs` ms, over and over. */
  churn(clients: number, depth: number, stayMs: number): void {
    for (let c = 0; c < clients; c += 1) this.loops.push(this.loop(async (connection) => {
      connection.send(Array.from({ length: depth }, (_, k) => this.units[k % this.units.length]!));
      const stay = sleep(Math.random() * stayMs).then(() => connection.socket.destroy());
      return { onAnswer: () => undefined, done: Promise.race([stay, connection.closed]).then(() => connection.closed) };
    }));
  }

  /** One fresh connection with `units.length` reads pipelined; how many came back with values (the rest: exceptions). */
  async probe(units: readonly number[]): Promise<number> {
    const socket = await opened(this.port);
    if (!socket) throw new Error('the share does not accept a connection');
    const before = this.figures.values;
    let answers = 0;
    let allAnswered = (): void => undefined;
    const done = new Promise<void>((resolve) => { allAnswered = resolve; });
    const connection = new ShareConnection(socket, this, () => { if (++answers === units.length) allAnswered(); });
    connection.send(units);
    await Promise.race([done, connection.closed]);
    socket.destroy();
    await connection.closed;
    return this.figures.values - before;
  }

  /** Stops every client and waits until each connection is closed. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async loop(session: (connection: ShareConnection) => Promise<{ onAnswer: (ok: boolean) => void; done: Promise<void> }>): Promise<void> {
    while (this.running) {
      const socket = await opened(this.port);
      if (!socket) {
        // The share restarting (a reload changed its block): not listening for a moment.
        this.figures.refusedConnections += 1;
        await sleep(20);
        continue;
      }
      this.figures.connections += 1;
      let onAnswer: (ok: boolean) => void = () => undefined;
      const connection = new ShareConnection(socket, this, (ok) => onAnswer(ok));
      const started = await session(connection);
      onAnswer = started.onAnswer;
      const stopped = new Promise<void>((resolve) => {
        const check = setInterval(() => { if (!this.running) { clearInterval(check); resolve(); } }, 50);
        void connection.closed.then(() => { clearInterval(check); resolve(); });
      });
      await Promise.race([started.done, stopped]);
      socket.destroy();
      await connection.closed;
    }
  }
}

function opened(port: number): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(socket));
    socket.once('error', () => {
      socket.destroy();
      resolve(undefined);
    });
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
