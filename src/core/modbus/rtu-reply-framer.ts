// Pure framing of one RTU reply out of the bytes received after a request (RTU on a serial line,
// or RTU frames through a TCP serial server). Besides cutting the awaited frame it says what else
// it saw, so a bad exchange is named for what it is:
// - the local echo of an RS-485 adapter: expected and stripped (checked byte for byte) with
//   `echo: true`; without it, a reply that starts with the exact request bytes is "the line echoes";
// - a reply of another length than asked whose byte count and CRC agree with each other (one
//   register too many, say): a length mismatch, not a CRC error;
// - bytes skipped before the frame, and bytes after it (a duplicate, a late or foreign frame);
// - the late reply of an earlier request of the same unit whose reply has another length (told
//   apart by its length and CRC, skipped), and an exception reply that could be either (ambiguous).
import { crc16 } from './rtu-frame.js';
import { type ExpectedReply, expectedPduLength } from './reply-check.js';

/** The largest RTU frame Modbus allows; more bytes than this in one exchange are noise. */
const MAX_RTU_FRAME = 256;
const EXCEPTION_FRAME = 5;
/** Address + function code + byte count + CRC around the data of a read reply. */
const READ_OVERHEAD = 5;

export type EchoVerdict =
  /** Echo not expected and none seen. */
  | 'none'
  /** Echo expected, received byte-identical, stripped. */
  | 'stripped'
  /** Echo expected but the bytes differed from the request (a collision or a garbled echo). */
  | 'differs'
  /** Echo expected, but the reply came without it. */
  | 'missing'
  /** Echo not expected, yet the reply started with the exact request bytes (stripped, flagged). */
  | 'unexpected';

export interface ReplyVerdict {
  echo: EchoVerdict;
  /** Bytes before the frame (late or foreign bytes the scan skipped). */
  skipped: number;
  /** Bytes after the frame. */
  extra: number;
  /** Set when the frame handed over is complete and consistent but not of the asked length. */
  lengthMismatch?: string;
  /** Set when the frame handed over could as well be the late reply of an earlier request. */
  ambiguous?: string;
}

/** An earlier request of the exchange's unit whose reply may still come (its function and frame length). */
export interface LateShape {
  functionCode: number;
  frameLength: number;
}

function hasValidCrc(bytes: Buffer, length: number): boolean {
  return bytes.length >= length && length >= 4 && crc16(bytes, 0, length - 2) === bytes.readUInt16LE(length - 2);
}

/** Requests whose normal reply is a byte-for-byte copy of the request (an echo is indistinguishable). */
function replyCopiesRequest(functionCode: number): boolean {
  return functionCode === 5 || functionCode === 6;
}

export class RtuReplyFramer {
  private rx: Buffer = Buffer.alloc(0);
  private request: Buffer = Buffer.alloc(0);
  private expected: ExpectedReply | undefined;
  private echoExpected = false;
  /** True once the echo question is settled (stripped, differs, missing or not applicable). */
  private echoSettled = true;
  private verdictState: ReplyVerdict = { echo: 'none', skipped: 0, extra: 0 };
  private framed = false;
  private late: readonly LateShape[] = [];
  /** A late reply of the asked function was still awaited when the last bytes came (an exception could be it). */
  private exceptionMayBeLate = false;

  /**
   * A request went out: frame its reply from the next byte on. `late`: replies still awaited from
   * the same unit (never of the asked shape: the bus does not send such a request meanwhile).
   */
  begin(request: Buffer, expected: ExpectedReply, echo: boolean, late: readonly LateShape[] = []): void {
    this.rx = Buffer.alloc(0);
    this.late = late.filter((shape) => shape.functionCode === expected.functionCode);
    this.exceptionMayBeLate = this.late.length > 0;
    this.request = request;
    this.expected = expected;
    this.echoExpected = echo;
    this.echoSettled = false;
    this.framed = false;
    this.verdictState = { echo: 'none', skipped: 0, extra: 0 };
  }

  /**
   * Which late replies are still awaited as the next bytes arrive (one may have expired with its
   * guard, or come, since the request went out): an exception reply is ambiguous only while one of
   * the asked unit and function is. Frames of the lengths given to `begin` are still skipped.
   */
  stillAwaited(awaited: readonly { unit: number; functionCode: number }[]): void {
    const expected = this.expected;
    this.exceptionMayBeLate = expected !== undefined && this.late.length > 0
      && awaited.some((a) => a.unit === expected.unit && a.functionCode === expected.functionCode);
  }

  /** No exchange any more: later bytes are strays. */
  end(): void {
    this.expected = undefined;
  }

  get active(): boolean {
    return this.expected !== undefined;
  }

  verdict(): ReplyVerdict {
    return { ...this.verdictState };
  }

  /** Bytes received but not handed over as the frame (before or after it, or an unfinished frame). */
  get unframed(): number {
    return this.verdictState.skipped + this.verdictState.extra + (this.framed ? 0 : this.rx.length);
  }

  /**
   * The line went quiet while it waited for a longer frame than asked (a byte count that is
   * neither what was asked nor consistent with the CRC): hands over the asked length (a CRC error).
   */
  flush(): Buffer | undefined {
    const length = this.awaitingLonger();
    return length === undefined ? undefined : this.take(length.start, length.length);
  }

  /** Start and asked length of a frame whose asked length has arrived while more is awaited. */
  awaitingLonger(): { start: number; length: number } | undefined {
    const expected = this.expected;
    if (!expected || this.framed || !this.echoSettled) return undefined;
    const pdu = expectedPduLength(expected.functionCode, expected.quantity);
    if (pdu === undefined) return undefined;
    const start = this.rx.indexOf(expected.unit);
    if (start < 0 || this.rx[start + 1] !== expected.functionCode || this.rx.length - start < pdu + 3) return undefined;
    // A late reply of an earlier request (its byte count says so) is not cut short.
    if (this.lateFrameAt(this.rx.subarray(start), pdu + 3) !== undefined) return undefined;
    return { start, length: pdu + 3 };
  }

  /** Received bytes; returns the frame to hand over, once per exchange. */
  push(chunk: Buffer): Buffer | undefined {
    if (!this.expected || this.framed) {
      this.verdictState.extra += chunk.length;
      return undefined;
    }
    this.rx = this.rx.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.rx, chunk]);
    if (!this.settleEcho()) return undefined;
    const frame = this.frame(this.expected);
    if (frame === undefined && this.rx.length > MAX_RTU_FRAME) {
      this.verdictState.skipped += this.rx.length;
      this.rx = Buffer.alloc(0);
    }
    return frame;
  }

  /** False while it cannot yet tell whether the bytes so far are an echo. */
  private settleEcho(): boolean {
    if (this.echoSettled) return true;
    const request = this.request;
    const prefix = Math.min(this.rx.length, request.length);
    const matches = this.rx.subarray(0, prefix).equals(request.subarray(0, prefix));
    if (this.echoExpected) {
      if (!matches) {
        // Not the request's bytes: a reply without echo starts with the same unit and function code.
        const replyShaped = this.rx[0] === request[0] && this.rx.length >= 2 && (this.rx[1] === request[1] || this.rx[1] === ((request[1] ?? 0) | 0x80));
        this.verdictState.echo = replyShaped ? 'missing' : 'differs';
        if (this.verdictState.echo === 'differs' && this.rx.length < request.length) return false;
        if (this.verdictState.echo === 'differs') this.strip(request.length);
        this.echoSettled = true;
        return true;
      }
      if (this.rx.length < request.length) return false;
      this.verdictState.echo = 'stripped';
      this.strip(request.length);
      this.echoSettled = true;
      return true;
    }
    if (!matches || replyCopiesRequest(request[1] ?? 0)) {
      this.echoSettled = true;
      return true;
    }
    if (this.rx.length < request.length) return false; // so far a prefix of the request: wait
    this.verdictState.echo = 'unexpected';
    this.strip(request.length);
    this.echoSettled = true;
    return true;
  }

  private strip(bytes: number): void {
    this.rx = this.rx.subarray(bytes);
  }

  private frame(expected: ExpectedReply): Buffer | undefined {
    const rx = this.rx;
    for (let i = 0; i + 1 < rx.length; i += 1) {
      if (rx[i] !== expected.unit) continue;
      const code = rx[i + 1];
      const rest = rx.subarray(i);
      if (code === (expected.functionCode | 0x80)) {
        if (rest.length < EXCEPTION_FRAME) return undefined;
        if (this.exceptionMayBeLate) {
          this.verdictState.ambiguous = `exception reply of unit ${expected.unit} to function ${expected.functionCode} while an earlier request of the same function may still be answered`;
        }
        return this.take(i, EXCEPTION_FRAME);
      }
      if (code !== expected.functionCode) continue;
      const pdu = expectedPduLength(expected.functionCode, expected.quantity);
      if (pdu === undefined) return undefined;
      const length = pdu + 3;
      const late = this.lateFrameAt(rest, length);
      if (late === 'incomplete') return undefined;
      if (late !== undefined) {
        i += late - 1; // an earlier request's late reply (another length, good CRC): skipped, counted
        continue;
      }
      if (expected.functionCode > 4 || rest.length < 3 || rest[2] === length - READ_OVERHEAD) {
        return rest.length < length ? undefined : this.take(i, length);
      }
      return this.readOfOtherLength(i, length, rest[2] as number);
    }
    return undefined;
  }

  /** The length of an awaited late reply starting at `rest` (a read of another length with a good CRC). */
  private lateFrameAt(rest: Buffer, askedLength: number): number | 'incomplete' | undefined {
    if (rest.length < 3) return this.late.length > 0 ? 'incomplete' : undefined;
    const shape = this.late.find((s) => s.frameLength !== askedLength && s.functionCode <= 4 && rest[2] === s.frameLength - READ_OVERHEAD);
    if (!shape) return undefined;
    if (rest.length < shape.frameLength) return 'incomplete';
    return hasValidCrc(rest, shape.frameLength) ? shape.frameLength : undefined;
  }

  /** A read reply whose byte count is not what was asked: consistent frame (length mismatch) or noise. */
  private readOfOtherLength(start: number, length: number, byteCount: number): Buffer | undefined {
    const rest = this.rx.subarray(start);
    const consistent = byteCount + READ_OVERHEAD;
    if (consistent <= MAX_RTU_FRAME && hasValidCrc(rest, consistent)) {
      const expected = this.expected as ExpectedReply;
      const asked = length - READ_OVERHEAD;
      const unit = expected.functionCode <= 2 ? 'bits' : 'registers';
      const got = expected.functionCode <= 2 ? `${byteCount} data bytes` : `${byteCount / 2} registers`;
      this.verdictState.lengthMismatch = `reply length mismatch: ${got} (byte count ${byteCount}, CRC good) to a read of ${expected.quantity} ${unit} (${asked} data bytes)`;
      return this.take(start, consistent);
    }
    // The asked length with a good CRC: a wrong byte count the reply checks will name.
    if (hasValidCrc(rest, length)) return this.take(start, length);
    // Neither: wait for the longer of the two, then hand over the asked length (a CRC error).
    if (rest.length < Math.max(length, Math.min(consistent, MAX_RTU_FRAME))) return undefined;
    return this.take(start, length);
  }

  private take(start: number, length: number): Buffer {
    this.framed = true;
    this.verdictState.skipped += start;
    this.verdictState.extra += this.rx.length - start - length;
    const frame = Buffer.from(this.rx.subarray(start, start + length));
    this.rx = Buffer.alloc(0);
    return frame;
  }
}
