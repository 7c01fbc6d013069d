// A custom data stream on an RS-485 line shared with Modbus: every write is one raw exchange in the
// bus's turn (ahead of queued polls), and its reply, collected until the line goes quiet, comes
// back as one chunk. The bus owns the port, so opening and reconnecting are the bus's business.
import type { StreamConfig } from '../../core/config/command-types.js';
import type { RawReplyWindow } from '../modbus/raw-exchange.js';
import type { ByteEndpoint } from './endpoint.js';

/** What the endpoint needs of a Bus. */
export interface RawLine {
  readonly name: string;
  exchangeRaw(data: Buffer, window: RawReplyWindow): Promise<Buffer>;
}

export class BusLineEndpoint implements ByteEndpoint {
  readonly target: string;
  readonly deliversWholeReplies = true;
  private readonly window: RawReplyWindow;
  private readonly listeners: Array<(chunk: Buffer) => void> = [];

  constructor(private readonly line: RawLine, stream: Pick<StreamConfig, 'quietMs' | 'replyTimeoutMs' | 'maxReplyBytes'>) {
    this.target = `bus ${line.name}`;
    this.window = { quietMs: stream.quietMs, replyTimeoutMs: stream.replyTimeoutMs, maxReplyBytes: stream.maxReplyBytes };
  }

  async open(): Promise<void> {
    // Nothing to open: a write while the bus is down fails with the bus's own error.
  }

  async write(data: Buffer): Promise<void> {
    const reply = await this.line.exchangeRaw(data, this.window);
    if (reply.length === 0) return;
    for (const listener of this.listeners) listener(reply);
  }

  onData(listener: (chunk: Buffer) => void): void {
    this.listeners.push(listener);
  }

  onClose(): void {
    // Never closes on its own: the bus reconnects by itself.
  }

  async close(): Promise<void> {
    // The bus is stopped by the southbound, not by a stream.
  }
}
