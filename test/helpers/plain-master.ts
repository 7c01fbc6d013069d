// A plain RTU master for comparison (issue 41): on a grid of `pollIntervalMs` it reads the same
// 4 holding registers as lost-frames.ts's device, from the same raw device (trap-peer.ts) losing
// the same share of frames at random, and repeats a timed-out request `repeats` times before it
// gives the sample up, as libmodbus-style masters do. No guard, no cool-down: the baseline a lossy
// line allows. Its own framing: flush, send, wait for a CRC-valid reply of the asked length.
import { crc16, encodeRtuFrame } from '../../src/core/modbus/rtu-frame.js';
import { openSerialLine } from '../../packages/simulator/src/serial-line.js';
import { seeded } from './lost-frames.js';
import { startPtyPair } from './socat.js';
import { startTrapPeer, truthOf } from './trap-peer.js';

export interface PlainMasterResult {
  slots: number;
  samplesLost: number;
  lostFrames: number;
  wrongValues: number;
}

const UNIT = 1;
const COUNT = 4;

export async function runPlainMaster(options: { rate: number; seed: number; samples: number; pollIntervalMs: number; timeoutMs: number; repeats: number }): Promise<PlainMasterResult> {
  const pair = await startPtyPair();
  const random = seeded(options.seed);
  let lostFrames = 0;
  const peer = await startTrapPeer(pair.b, {
    answer: () => {
      if (random() >= options.rate) return { afterMs: 0 };
      lostFrames += 1;
      return 'silent';
    },
  });
  let rx = Buffer.alloc(0);
  let onData: (() => void) | undefined;
  const line = await openSerialLine(pair.a, { baud: 19200, parity: 'even', dataBits: 8, stopBits: 1 }, {
    onError: () => undefined, onClose: () => undefined,
    onData: (chunk: Buffer) => {
      rx = Buffer.concat([rx, chunk]);
      onData?.();
    },
  });
  const replyLength = 5 + 2 * COUNT;
  const request = encodeRtuFrame(UNIT, Buffer.from([3, 0, 0, 0, COUNT]));
  const readOnce = () => new Promise<number[] | undefined>((resolve) => {
    rx = Buffer.alloc(0);
    const timer = setTimeout(() => {
      onData = undefined;
      resolve(undefined);
    }, options.timeoutMs);
    onData = () => {
      if (rx.length < replyLength) return;
      clearTimeout(timer);
      onData = undefined;
      const frame = rx.subarray(0, replyLength);
      const good = crc16(frame, 0, replyLength - 2) === frame.readUInt16LE(replyLength - 2);
      resolve(good ? Array.from({ length: COUNT }, (_, i) => frame.readUInt16BE(3 + 2 * i)) : undefined);
    };
    line.write(request);
  });
  const result: PlainMasterResult = { slots: 0, samplesLost: 0, lostFrames: 0, wrongValues: 0 };
  try {
    const start = Date.now();
    for (let slot = 0; slot < options.samples; slot += 1) {
      const due = start + slot * options.pollIntervalMs;
      if (Date.now() > due + options.pollIntervalMs / 2) { // overran: this slot is lost
        result.samplesLost += 1;
        continue;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
      result.slots += 1;
      let values: number[] | undefined;
      for (let attempt = 0; attempt <= options.repeats && values === undefined; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 2)); // the inter-frame silence
        values = await readOnce();
      }
      if (values === undefined) result.samplesLost += 1;
      else result.wrongValues += values.filter((v, i) => v !== truthOf(UNIT, i)).length;
    }
  } finally {
    await line.close();
    await peer.stop();
    await pair.stop();
  }
  return { ...result, lostFrames };
}
