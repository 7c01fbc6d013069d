// Counts what an RTU-framed stream received against what modbus-serial handed over as frames.
// While it waits for a reply the library scans its buffer for the awaited unit and function and
// silently drops whatever lies before a match (a late or foreign frame); between exchanges it even
// consumes a late frame that matches the last request. The tally makes those bytes visible, so
// such an exchange is discarded as ambiguous and every stray frame is counted.
import { EventEmitter } from 'node:events';
import { libraryPortOf, takeUnmatchedInput } from './library-errors.js';

export class RtuReceiveTally {
  private received = 0;
  private framed = 0;
  /** Bytes that arrived while no exchange was running. */
  private between = 0;
  private active = false;

  private constructor(port: EventEmitter, stream: EventEmitter) {
    stream.on('data', (chunk: unknown) => {
      if (!Buffer.isBuffer(chunk)) return;
      if (this.active) this.received += chunk.length;
      else this.between += chunk.length;
    });
    port.on('data', (frame: unknown) => { if (Buffer.isBuffer(frame) && this.active) this.framed += frame.length; });
  }

  /** Undefined when the client's port is not the buffered RTU or telnet port this relies on. */
  static install(client: object): RtuReceiveTally | undefined {
    const port = libraryPortOf(client);
    const stream: unknown = port instanceof EventEmitter ? Reflect.get(port, '_client') : undefined;
    if (!(port instanceof EventEmitter) || !(stream instanceof EventEmitter)) return undefined;
    return new RtuReceiveTally(port, stream);
  }

  /**
   * Starts an exchange: flushes the receive buffer and returns the stray bytes since the last
   * exchange ended (still buffered, or consumed by the library as a frame nobody awaited).
   */
  begin(client: object): number {
    const buffered = takeUnmatchedInput(client);
    const strays = Math.max(buffered, this.between);
    this.received = 0;
    this.framed = 0;
    this.between = 0;
    this.active = true;
    return strays;
  }

  /**
   * Called after the quiet window that follows a reply: why the exchange is ambiguous, if it is.
   * Bytes after the reply (a duplicate or foreign frame) or bytes the library skipped before it.
   */
  ambiguity(client: object): string | undefined {
    const extra = takeUnmatchedInput(client);
    if (extra > 0) return `${extra} bytes after the reply (duplicate or foreign frame)`;
    const skipped = this.received - this.framed;
    return skipped > 0 ? `${skipped} bytes before the reply (late or foreign frame)` : undefined;
  }

  /** Ends the exchange: from now on every byte is a stray. */
  end(): void {
    this.active = false;
  }
}
