// A TCP pipe in front of an MQTT broker that counts the PUBLISH packets (and their bytes) clients
// send through it: messages to the broker as the broker sees them, whatever the client claims.
// Only the fixed header is read (type nibble + remaining length, MQTT 3.1.1 section 2.2).
import { connect, createServer, type Server, type Socket } from 'node:net';

const PUBLISH = 3;

/** Splits a client's byte stream into MQTT packets; calls `onPacket(type, bytes)` for each. */
export class PacketSplitter {
  private buffered = Buffer.alloc(0);

  constructor(private readonly onPacket: (type: number, bytes: number) => void) {}

  push(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    for (;;) {
      const header = this.header();
      if (header === undefined || this.buffered.length < header.total) return;
      this.onPacket(this.buffered[0] >> 4, header.total);
      this.buffered = this.buffered.subarray(header.total);
    }
  }

  private header(): { total: number } | undefined {
    let length = 0;
    for (let i = 1; i <= 4; i += 1) {
      if (this.buffered.length <= i) return undefined;
      const byte = this.buffered[i];
      length += (byte & 0x7f) * 128 ** (i - 1);
      if ((byte & 0x80) === 0) return { total: 1 + i + length };
    }
    throw new Error('malformed MQTT remaining length');
  }
}

export class PublishCounter {
  publishes = 0;
  publishBytes = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server, readonly port: number) {}

  static async start(brokerPort: number): Promise<PublishCounter> {
    let counter: PublishCounter | undefined;
    const server = createServer((client) => counter?.join(client, brokerPort));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    counter = new PublishCounter(server, (server.address() as { port: number }).port);
    return counter;
  }

  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private join(client: Socket, brokerPort: number): void {
    const broker = connect(brokerPort, '127.0.0.1');
    const splitter = new PacketSplitter((type, bytes) => {
      if (type !== PUBLISH) return;
      this.publishes += 1;
      this.publishBytes += bytes;
    });
    for (const s of [client, broker]) {
      this.sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        this.sockets.delete(s);
        client.destroy();
        broker.destroy();
      });
    }
    client.pipe(broker);
    broker.pipe(client);
    client.on('data', (chunk: Buffer) => {
      try {
        splitter.push(chunk);
      } catch {
        client.destroy();
      }
    });
  }
}
