// Cuts RTU request frames out of a serial byte stream (pure: the caller passes time in).
// A frame ends when its function code says it is complete, or after line silence for codes
// whose length we do not know. A partial frame older than the silence time is dropped, as a
// real device would after t3.5 of silence.
import { decodeRtuFrame } from 'fieldgate/workspace-kit';
import { expectedRequestLength } from './frames.js';

export type AssembledFrame =
  | { kind: 'frame'; unit: number; pdu: Buffer; bytes: number }
  | { kind: 'bad-frame'; reason: 'bad-crc' | 'too-short' | 'too-long' | 'truncated'; bytes: number };

/** The largest RTU frame Modbus allows. */
export const MAX_RTU_FRAME = 256;

export class RtuAssembler {
  private buffer: Buffer = Buffer.alloc(0);
  private lastByteMicros = 0;

  constructor(private readonly silenceMicros: number) {}

  get buffered(): number {
    return this.buffer.length;
  }

  push(chunk: Buffer, nowMicros: number): AssembledFrame[] {
    const out: AssembledFrame[] = [];
    if (this.buffer.length > 0 && nowMicros - this.lastByteMicros >= this.silenceMicros) out.push(...this.flush());
    this.lastByteMicros = nowMicros;
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const expected = expectedRequestLength(this.buffer);
      if (expected === 'need-more' || expected === 'unknown' || this.buffer.length < expected) break;
      out.push(this.take(expected));
    }
    if (this.buffer.length > MAX_RTU_FRAME) {
      out.push({ kind: 'bad-frame', reason: 'too-long', bytes: this.buffer.length });
      this.buffer = Buffer.alloc(0);
    }
    return out;
  }

  /** The line went silent: whatever is buffered is one frame (complete or not). */
  flush(): AssembledFrame[] {
    if (this.buffer.length === 0) return [];
    const expected = expectedRequestLength(this.buffer);
    if (expected !== 'unknown') {
      const bytes = this.buffer.length;
      this.buffer = Buffer.alloc(0);
      return [{ kind: 'bad-frame', reason: 'truncated', bytes }];
    }
    return [this.take(this.buffer.length)];
  }

  private take(length: number): AssembledFrame {
    // Copy: the chunk buffer may be reused by the stream after this call.
    const frame = Buffer.from(this.buffer.subarray(0, length));
    this.buffer = this.buffer.subarray(length);
    const decoded = decodeRtuFrame(frame);
    if (!decoded.ok) return { kind: 'bad-frame', reason: decoded.reason, bytes: length };
    return { kind: 'frame', unit: decoded.unit, pdu: decoded.pdu, bytes: length };
  }
}
