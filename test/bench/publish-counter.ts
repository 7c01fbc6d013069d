// A TCP pipe in front of an MQTT broker that counts the PUBLISH packets (and their bytes) clients
// send through it: messages to the broker as the broker sees them, whatever the client claims.
// Only the fixed header is read (type nibble + remaining length, MQTT 3.1.1 section 2.2).
import { BrokerPipe } from '../system/delivery-rig.js';

const PUBLISH = 3;

/** Splits a client's byte stream into MQTT packets; calls `onPacket(type, bytes)` for each. */
export class PacketSplitter {
  private buffered: Buffer = Buffer.alloc(0);

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

/** Counts what clients publish through a pipe in front of the broker. */
export class PublishCounter {
  publishes = 0;
  publishBytes = 0;
  private pipe: BrokerPipe | undefined;

  static async start(brokerPort: number): Promise<PublishCounter> {
    const counter = new PublishCounter();
    counter.pipe = await BrokerPipe.start(brokerPort, () => {
      const splitter = new PacketSplitter((type, bytes) => {
        if (type !== PUBLISH) return;
        counter.publishes += 1;
        counter.publishBytes += bytes;
      });
      return (chunk) => splitter.push(chunk);
    });
    return counter;
  }

  get url(): string {
    return this.pipe?.url ?? '';
  }

  async close(): Promise<void> {
    await this.pipe?.close();
  }
}
