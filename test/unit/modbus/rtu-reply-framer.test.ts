// RtuReplyFramer, table-driven: which bytes become the frame handed to the client, and what the
// verdict says (echo, length mismatch, bytes skipped or after), chunked every way a line may split them.
import { describe, expect, it } from 'vitest';
import { encodeRtuFrame } from '../../../src/core/modbus/rtu-frame.js';
import type { ExpectedReply } from '../../../src/core/modbus/reply-check.js';
import { type EchoVerdict, RtuReplyFramer } from '../../../src/core/modbus/rtu-reply-framer.js';

/** A request of two 16-bit fields (FC3 start/count, FC6 address/value) as an RTU frame. */
const twoFields = (unit: number, code: number, first: number, second: number): Buffer => {
  const pdu = Buffer.alloc(5);
  pdu[0] = code;
  pdu.writeUInt16BE(first, 1);
  pdu.writeUInt16BE(second, 3);
  return encodeRtuFrame(unit, pdu);
};
const read = (unit: number, start: number, count: number): Buffer => twoFields(unit, 3, start, count);
const writeSingle = (unit: number, address: number, value: number): Buffer => twoFields(unit, 6, address, value);
const registers = (unit: number, values: number[], byteCount = values.length * 2): Buffer => {
  const pdu = Buffer.alloc(2 + values.length * 2);
  pdu[0] = 3;
  pdu[1] = byteCount;
  values.forEach((v, i) => pdu.writeUInt16BE(v, 2 + 2 * i));
  return encodeRtuFrame(unit, pdu);
};
const withBadCrc = (frame: Buffer): Buffer => {
  const copy = Buffer.from(frame);
  copy[copy.length - 1] ^= 0xff;
  return copy;
};

const REQ = read(1, 0, 2);
const ASK: ExpectedReply = { unit: 1, functionCode: 3, quantity: 2, address: 0 };
const GOOD = registers(1, [10, 11]);
const WRITE = writeSingle(1, 5, 7);
const WRITE_ASK: ExpectedReply = { unit: 1, functionCode: 6, quantity: 1, address: 5 };

interface Case {
  name: string;
  request?: Buffer;
  ask?: ExpectedReply;
  echo: boolean;
  bytes: Buffer;
  frame: Buffer | undefined;
  verdict: { echo: EchoVerdict; skipped?: number; extra?: number; lengthMismatch?: RegExp };
}

const CASES: Case[] = [
  { name: 'a plain reply', echo: false, bytes: GOOD, frame: GOOD, verdict: { echo: 'none' } },
  { name: 'echo expected, identical, then the reply', echo: true, bytes: Buffer.concat([REQ, GOOD]), frame: GOOD, verdict: { echo: 'stripped' } },
  { name: 'echo not expected, yet the reply starts with the request', echo: false, bytes: Buffer.concat([REQ, GOOD]), frame: GOOD, verdict: { echo: 'unexpected' } },
  { name: 'echo expected but garbled (a collision)', echo: true, bytes: Buffer.concat([Buffer.from([9, 9, 9, 9, 9, 9, 9, 9]), GOOD]), frame: GOOD, verdict: { echo: 'differs' } },
  { name: 'echo expected but the reply comes alone', echo: true, bytes: GOOD, frame: GOOD, verdict: { echo: 'missing' } },
  { name: 'echo expected, a write (FC6) whose reply copies the request', request: WRITE, ask: WRITE_ASK, echo: true, bytes: Buffer.concat([WRITE, WRITE]), frame: WRITE, verdict: { echo: 'stripped' } },
  { name: 'no echo expected, a write on an echoing line: the copy after is extra', request: WRITE, ask: WRITE_ASK, echo: false, bytes: Buffer.concat([WRITE, WRITE]), frame: WRITE, verdict: { echo: 'none', extra: 8 } },
  { name: 'one register too many, consistent: length mismatch', echo: false, bytes: registers(1, [10, 11, 12]), frame: registers(1, [10, 11, 12]), verdict: { echo: 'none', lengthMismatch: /3 registers \(byte count 6, CRC good\) to a read of 2 registers \(4 data bytes\)/ } },
  { name: 'one register too few, consistent: length mismatch', echo: false, bytes: registers(1, [10]), frame: registers(1, [10]), verdict: { echo: 'none', lengthMismatch: /1 registers \(byte count 2/ } },
  { name: 'echo stripped, then one register too many', echo: true, bytes: Buffer.concat([REQ, registers(1, [10, 11, 12])]), frame: registers(1, [10, 11, 12]), verdict: { echo: 'stripped', lengthMismatch: /3 registers/ } },
  { name: 'a short byte count padded to the asked length: handed over for the reply checks', echo: false, bytes: registers(1, [10, 11], 2), frame: registers(1, [10, 11], 2), verdict: { echo: 'none' } },
  { name: 'bad CRC at the asked length: handed over (a CRC error)', echo: false, bytes: withBadCrc(GOOD), frame: withBadCrc(GOOD), verdict: { echo: 'none' } },
  { name: 'an exception reply', echo: false, bytes: encodeRtuFrame(1, Buffer.from([0x83, 2])), frame: encodeRtuFrame(1, Buffer.from([0x83, 2])), verdict: { echo: 'none' } },
  { name: 'a foreign frame ahead: skipped bytes', echo: false, bytes: Buffer.concat([registers(7, [1, 2]), GOOD]), frame: GOOD, verdict: { echo: 'none', skipped: 9 } },
  { name: 'a duplicate after: extra bytes', echo: false, bytes: Buffer.concat([GOOD, GOOD]), frame: GOOD, verdict: { echo: 'none', extra: 9 } },
  { name: 'half a reply: nothing yet', echo: false, bytes: GOOD.subarray(0, 5), frame: undefined, verdict: { echo: 'none' } },
  { name: 'only the echo so far: nothing yet', echo: true, bytes: REQ, frame: undefined, verdict: { echo: 'stripped' } },
];

function run(c: Case, chunk: number): { frame: Buffer | undefined; framer: RtuReplyFramer } {
  const framer = new RtuReplyFramer();
  framer.begin(c.request ?? REQ, c.ask ?? ASK, c.echo);
  let frame: Buffer | undefined;
  for (let at = 0; at < c.bytes.length; at += chunk) frame = framer.push(c.bytes.subarray(at, at + chunk)) ?? frame;
  return { frame, framer };
}

describe('RtuReplyFramer', () => {
  for (const chunk of [1, 3, 64]) {
    it.each(CASES)(`$name (chunks of ${chunk})`, (c) => {
      const { frame, framer } = run(c, chunk);
      expect(frame).toEqual(c.frame);
      const verdict = framer.verdict();
      expect(verdict.echo).toBe(c.verdict.echo);
      expect(verdict.skipped).toBe(c.verdict.skipped ?? 0);
      expect(verdict.extra).toBe(c.verdict.extra ?? 0);
      if (c.verdict.lengthMismatch) expect(verdict.lengthMismatch).toMatch(c.verdict.lengthMismatch);
      else expect(verdict.lengthMismatch).toBeUndefined();
    });
  }

  it('a byte count that is neither asked nor consistent waits for the longer frame, and flush() hands over the asked length', () => {
    const framer = new RtuReplyFramer();
    framer.begin(REQ, ASK, false);
    const noisy = Buffer.from(GOOD);
    noisy[2] = 40; // byte count garbled by noise: CRC fails both ways
    expect(framer.push(noisy)).toBeUndefined();
    expect(framer.awaitingLonger()).toEqual({ start: 0, length: 9 });
    expect(framer.flush()).toEqual(noisy.subarray(0, 9));
  });

  it('more than a frame of noise is dropped as skipped bytes, bounded', () => {
    const framer = new RtuReplyFramer();
    framer.begin(REQ, ASK, false);
    expect(framer.push(Buffer.alloc(300, 0x55))).toBeUndefined();
    expect(framer.verdict().skipped).toBe(300);
    expect(framer.push(GOOD)).toEqual(GOOD);
  });

  describe('with an earlier request of the same unit still awaited (a late reply of another length)', () => {
    const LATE = [{ functionCode: 3, frameLength: 13 }]; // a read of 4 registers timed out
    const lateFrame = registers(1, [0xbad0, 0xbad0, 0xbad0, 0xbad0]);
    for (const chunk of [1, 4, 64]) {
      it(`the late frame ahead is skipped, the asked one handed over (chunks of ${chunk})`, () => {
        const framer = new RtuReplyFramer();
        framer.begin(REQ, ASK, false, LATE);
        const bytes = Buffer.concat([lateFrame, GOOD]);
        let frame: Buffer | undefined;
        for (let at = 0; at < bytes.length; at += chunk) {
          frame = framer.push(bytes.subarray(at, at + chunk)) ?? frame;
          // A pause on the line inside the late frame must not cut it to the asked length.
          if (at + chunk < lateFrame.length) expect(framer.awaitingLonger()).toBeUndefined();
        }
        expect(frame).toEqual(GOOD);
        expect(framer.verdict()).toEqual({ echo: 'none', skipped: 13, extra: 0 });
      });
    }

    it('an exception reply of that function is ambiguous: it may answer the earlier request', () => {
      const framer = new RtuReplyFramer();
      framer.begin(REQ, ASK, false, LATE);
      expect(framer.push(encodeRtuFrame(1, Buffer.from([0x83, 6])))).toBeDefined();
      expect(framer.verdict().ambiguous).toMatch(/exception reply of unit 1/);
    });

    it('an exception reply that arrives once no late reply of that function is awaited any more is unambiguous', () => {
      const framer = new RtuReplyFramer();
      framer.begin(REQ, ASK, false, LATE);
      framer.stillAwaited([{ unit: 2, functionCode: 3 }, { unit: 1, functionCode: 4 }]); // its guard ran out meanwhile
      expect(framer.push(encodeRtuFrame(1, Buffer.from([0x83, 6])))).toBeDefined();
      expect(framer.verdict().ambiguous).toBeUndefined();
    });

    it('still awaited as the exception arrives: ambiguous', () => {
      const framer = new RtuReplyFramer();
      framer.begin(REQ, ASK, false, LATE);
      framer.stillAwaited([{ unit: 1, functionCode: 3 }]);
      expect(framer.push(encodeRtuFrame(1, Buffer.from([0x83, 6])))).toBeDefined();
      expect(framer.verdict().ambiguous).toMatch(/exception reply of unit 1/);
    });

    it('a late frame that came before the guard ran out is still skipped after it', () => {
      const framer = new RtuReplyFramer();
      framer.begin(REQ, ASK, false, LATE);
      expect(framer.push(lateFrame)).toBeUndefined();
      framer.stillAwaited([]);
      expect(framer.push(GOOD)).toEqual(GOOD);
      expect(framer.verdict()).toEqual({ echo: 'none', skipped: 13, extra: 0 });
    });

    it('a late request of another function changes nothing', () => {
      const framer = new RtuReplyFramer();
      framer.begin(REQ, ASK, false, [{ functionCode: 4, frameLength: 9 }]);
      expect(framer.push(encodeRtuFrame(1, Buffer.from([0x83, 6])))).toBeDefined();
      expect(framer.verdict().ambiguous).toBeUndefined();
    });
  });

  it('bytes after end() are strays, not part of any exchange', () => {
    const framer = new RtuReplyFramer();
    framer.begin(REQ, ASK, false);
    framer.end();
    expect(framer.active).toBe(false);
    expect(framer.push(GOOD)).toBeUndefined();
  });
});
