// The far end of an RS-485 line shared by a Modbus unit and a raw ASCII device (a display, a
// barcode printer): Modbus requests are answered by the simulator, text lines ending in "\n" by
// `ECHO:<line>\r\n`, sent in two chunks a few ms apart as a slow device would. Anything else is
// recorded as garbage, which a test can assert never happens (no frames overlapping).
import { openSerialLine, type SerialLine } from '../../packages/simulator/src/serial-line.js';
import { decodeRtuFrame, encodeRtuFrame } from '../../src/core/modbus/rtu-frame.js';
import { expectedRequestLength } from '../../packages/simulator/src/frames.js';
import type { Simulator } from '../../packages/simulator/src/simulator.js';

export interface MixedLinePeer {
  readonly textLines: string[];
  readonly modbusRequests: number;
  readonly garbage: Buffer[];
  close(): Promise<void>;
}

/**
 * The quiet window a stream needs to take the peer's two chunks (5 ms apart, timed by the test
 * worker's own timers) as one reply on a busy machine: 30 ms split the first reply there.
 */
export const TWO_CHUNK_QUIET_MS = 150;

const isText = (byte: number | undefined) => byte !== undefined && byte >= 0x20 && byte < 0x7f;

export async function startMixedLinePeer(path: string, simulator: Simulator, chunkGapMs = 5): Promise<MixedLinePeer> {
  let buffer = Buffer.alloc(0);
  const peer = { textLines: [] as string[], modbusRequests: 0, garbage: [] as Buffer[] };
  let line: SerialLine | undefined;
  const take = (n: number) => {
    const head = buffer.subarray(0, n);
    buffer = buffer.subarray(n);
    return Buffer.from(head);
  };
  const consume = () => {
    for (;;) {
      if (buffer.length === 0) return;
      if (isText(buffer[0])) {
        const end = buffer.indexOf(0x0a);
        if (end < 0) return;
        const text = take(end + 1).toString('latin1').trimEnd();
        peer.textLines.push(text);
        const reply = Buffer.from(`ECHO:${text}\r\n`);
        line?.write(reply.subarray(0, 3));
        setTimeout(() => line?.write(reply.subarray(3)), chunkGapMs);
        continue;
      }
      const length = expectedRequestLength(buffer);
      if (length === 'need-more' || (typeof length === 'number' && buffer.length < length)) return;
      if (length === 'unknown') return void peer.garbage.push(take(buffer.length));
      const frame = decodeRtuFrame(take(length));
      if (!frame.ok) return void peer.garbage.push(buffer.length > 0 ? take(buffer.length) : Buffer.alloc(0));
      peer.modbusRequests += 1;
      const outcome = simulator.handle(frame.unit, frame.pdu);
      if (outcome.kind === 'reply') line?.write(encodeRtuFrame(frame.unit, outcome.pdu));
    }
  };
  line = await openSerialLine(path, { baud: 9600, parity: 'none', dataBits: 8, stopBits: 1 }, {
    onData: (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      consume();
    },
    onError: () => undefined,
    onClose: () => undefined,
  });
  return {
    get textLines() { return peer.textLines; },
    get modbusRequests() { return peer.modbusRequests; },
    get garbage() { return peer.garbage; },
    close: async () => line?.close(),
  };
}
