// Counts what an RTU-framed stream received against what modbus-serial handed over as frames.
// While it waits for a reply the library scans its buffer for the awaited unit and function and
// silently drops whatever lies before a match (a late or foreign frame); the tally makes those
// bytes visible so such an exchange is discarded as ambiguous instead.
import { EventEmitter } from 'node:events';
import { libraryPortOf } from './library-errors.js';

export class RtuReceiveTally {
  private received = 0;
  private framed = 0;

  private constructor(port: EventEmitter, stream: EventEmitter) {
    stream.on('data', (chunk: unknown) => { if (Buffer.isBuffer(chunk)) this.received += chunk.length; });
    port.on('data', (frame: unknown) => { if (Buffer.isBuffer(frame)) this.framed += frame.length; });
  }

  /** Undefined when the client's port is not the buffered RTU or telnet port this relies on. */
  static install(client: object): RtuReceiveTally | undefined {
    const port = libraryPortOf(client);
    const stream: unknown = port instanceof EventEmitter ? Reflect.get(port, '_client') : undefined;
    if (!(port instanceof EventEmitter) || !(stream instanceof EventEmitter)) return undefined;
    return new RtuReceiveTally(port, stream);
  }

  /** Starts counting for one exchange (after stale input was flushed). */
  reset(): void {
    this.received = 0;
    this.framed = 0;
  }

  /** Bytes received since reset and not handed over as a frame (call once the buffer was emptied). */
  skipped(): number {
    return Math.max(0, this.received - this.framed);
  }
}
