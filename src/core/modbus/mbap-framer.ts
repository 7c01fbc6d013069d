// Pure Modbus TCP framing: cuts a byte stream into MBAP frames, and says when the stream can no
// longer be trusted (a length field outside what Modbus allows: the next frame boundary is unknown).
import { MAX_PDU_BYTES } from './reply-check.js';

const MBAP_HEADER_BYTES = 7; // transaction id, protocol id, length, unit id

export interface MbapFrame {
  transactionId: number;
  protocolId: number;
  unit: number;
  /** Function code and data. */
  pdu: Buffer;
}

export type MbapEvent = { kind: 'frame'; frame: MbapFrame } | { kind: 'desync'; reason: string };

export class MbapFramer {
  private pending: Buffer = Buffer.alloc(0);

  /** Bytes of an incomplete frame waiting for the rest. */
  get pendingBytes(): number {
    return this.pending.length;
  }

  /** Appends received bytes; returns the complete frames, or a desync after which everything is dropped. */
  push(chunk: Buffer): MbapEvent[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const events: MbapEvent[] = [];
    while (this.pending.length >= 6) {
      const length = this.pending.readUInt16BE(4); // unit id + PDU
      if (length < 2 || length > MAX_PDU_BYTES + 1) {
        this.reset();
        events.push({ kind: 'desync', reason: `MBAP length ${length} outside 2..${MAX_PDU_BYTES + 1}` });
        return events;
      }
      const total = MBAP_HEADER_BYTES - 1 + length;
      if (this.pending.length < total) break;
      const frame = this.pending.subarray(0, total);
      events.push({
        kind: 'frame',
        frame: {
          transactionId: frame.readUInt16BE(0),
          protocolId: frame.readUInt16BE(2),
          unit: frame[6] as number,
          pdu: Buffer.from(frame.subarray(MBAP_HEADER_BYTES)),
        },
      });
      this.pending = this.pending.subarray(total);
    }
    return events;
  }

  reset(): void {
    this.pending = Buffer.alloc(0);
  }
}
