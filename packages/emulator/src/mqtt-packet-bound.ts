// A bound on the size of an incoming MQTT packet, which aedes 1.2.0 does not offer: its parser
// buffers whatever a fixed header announces (up to 256 MiB) until the packet is complete. This
// watches the bytes aedes reads, follows the fixed headers (type byte, remaining length as a
// variable-length integer of at most 4 bytes, then that many bytes) and closes the connection as
// soon as a header announces more than the bound, before the body is buffered.
import type { Duplex } from 'node:stream';

export type PacketVerdict =
  | { ok: true }
  | { ok: false; reason: 'too large'; announced: number }
  | { ok: false; reason: 'malformed length' };

/** Follows MQTT fixed headers across arbitrary chunking; pure. */
export class PacketSizeScanner {
  private state: 'type' | 'length' | 'body' = 'type';
  private length = 0;
  private multiplier = 1;
  private lengthBytes = 0;
  private remaining = 0;

  constructor(private readonly maxRemainingLength: number) {}

  /** Feed the next bytes; the first refusal is final (the caller closes the connection). */
  push(chunk: Buffer): PacketVerdict {
    let i = 0;
    while (i < chunk.length) {
      if (this.state === 'body') {
        const skip = Math.min(this.remaining, chunk.length - i);
        i += skip;
        this.remaining -= skip;
        if (this.remaining === 0) this.state = 'type';
        continue;
      }
      const byte = chunk[i] as number;
      i += 1;
      if (this.state === 'type') {
        this.state = 'length';
        this.length = 0;
        this.multiplier = 1;
        this.lengthBytes = 0;
        continue;
      }
      this.length += (byte & 0x7f) * this.multiplier;
      this.lengthBytes += 1;
      // The announced length only grows with more bytes: refuse as soon as it is over.
      if (this.length > this.maxRemainingLength) return { ok: false, reason: 'too large', announced: this.length };
      if ((byte & 0x80) !== 0) {
        if (this.lengthBytes === 4) return { ok: false, reason: 'malformed length' };
        this.multiplier *= 128;
        continue;
      }
      this.remaining = this.length;
      this.state = this.remaining > 0 ? 'body' : 'type';
    }
    return { ok: true };
  }
}

/**
 * Watches what `conn` hands its reader. Call right after aedes.handle(conn): aedes reads in
 * paused mode with read(), which emits 'data' before returning the bytes, so this sees each chunk
 * before aedes's parser does (and, added after aedes's 'readable' listener, does not switch the
 * stream to flowing mode). An oversized packet's header destroys the connection before its body
 * is buffered.
 */
export function boundMqttPackets(conn: Duplex, maxRemainingLength: number, onRefused: (verdict: Exclude<PacketVerdict, { ok: true }>) => void): void {
  const scanner = new PacketSizeScanner(maxRemainingLength);
  const watch = (chunk: Buffer): void => {
    const verdict = scanner.push(chunk);
    if (verdict.ok) return;
    conn.off('data', watch);
    // Reported first, while the connection still knows its peer; destroyed whatever the report does.
    try {
      onRefused(verdict);
    } finally {
      conn.destroy();
    }
  };
  conn.on('data', watch);
}
