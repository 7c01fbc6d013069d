// Exact reply matching (pure): PDU lengths, byte counts, write echoes, and MBAP framing.
import { describe, expect, it } from 'vitest';
import { MbapFramer } from '../../../src/core/modbus/mbap-framer.js';
import { pduMismatch, readReplyMismatch, writeEchoMismatch } from '../../../src/core/modbus/reply-check.js';

const read3 = { unit: 1, functionCode: 3, quantity: 2, address: 10 };

describe('pduMismatch', () => {
  it.each<[string, number[], string | undefined]>([
    ['exact reply', [3, 4, 0, 1, 0, 2], undefined],
    ['exception form', [0x83, 2], undefined],
    ['exception too long', [0x83, 2, 0], 'exception reply of 3 bytes'],
    ['other function', [4, 4, 0, 1, 0, 2], 'function code 4 (expected 3)'],
    ['short PDU', [3, 2, 0, 1], 'PDU of 4 bytes (expected 6)'],
    ['long PDU', [3, 6, 0, 1, 0, 2, 0, 3], 'PDU of 8 bytes (expected 6)'],
    ['short byte count, padded to length', [3, 2, 0xba, 0xd0, 0, 0], 'byte count 2 (expected 4)'],
  ])('%s', (_, bytes, expected) => {
    expect(pduMismatch(read3, Buffer.from(bytes))).toBe(expected);
  });

  it('knows the reply length of coils and writes', () => {
    expect(pduMismatch({ unit: 1, functionCode: 1, quantity: 9, address: 0 }, Buffer.from([1, 2, 0xff, 1]))).toBeUndefined();
    expect(pduMismatch({ unit: 1, functionCode: 16, quantity: 3, address: 0 }, Buffer.from([16, 0, 0, 0, 3]))).toBeUndefined();
    expect(pduMismatch({ unit: 1, functionCode: 6, quantity: 1, address: 0 }, Buffer.from([6, 0, 0]))).toBe('PDU of 3 bytes (expected 5)');
  });
});

describe('readReplyMismatch (what modbus-serial parsed)', () => {
  it.each<[string, number, number, { data: unknown[]; buffer?: Buffer }, string | undefined]>([
    ['registers as asked', 3, 2, { data: [1, 2], buffer: Buffer.alloc(4) }, undefined],
    ['short byte count with valid CRC', 3, 2, { data: [0xbad0], buffer: Buffer.alloc(2) }, 'byte count 2 (expected 4)'],
    ['no buffer', 4, 1, { data: [1] }, 'byte count missing (expected 2)'],
    ['coils padded to 8', 1, 3, { data: Array(8).fill(true), buffer: Buffer.alloc(1) }, undefined],
    ['coils short', 2, 9, { data: Array(8).fill(true), buffer: Buffer.alloc(1) }, 'byte count 1 (expected 2)'],
  ])('%s', (_, code, quantity, reply, expected) => {
    expect(readReplyMismatch(code, quantity, reply)).toBe(expected);
  });
});

describe('writeEchoMismatch', () => {
  it('wants the written address and, for FC15/16, the quantity echoed', () => {
    const write = { unit: 1, functionCode: 16, quantity: 3, address: 100 };
    expect(writeEchoMismatch(write, { address: 100, length: 3 })).toBeUndefined();
    expect(writeEchoMismatch(write, { address: 101, length: 3 })).toBe('echoed address 101 (expected 100)');
    expect(writeEchoMismatch(write, { address: 100, length: 2 })).toBe('echoed quantity 2 (expected 3)');
  });
});

describe('MbapFramer', () => {
  const frame = (tid: number, length: number, rest: number[]) => Buffer.from([tid >> 8, tid & 0xff, 0, 0, length >> 8, length & 0xff, ...rest]);

  it('cuts frames across chunk boundaries and keeps what is unfinished', () => {
    const framer = new MbapFramer();
    const bytes = Buffer.concat([frame(1, 5, [1, 3, 2, 0, 7]), frame(2, 5, [1, 3, 2, 0, 8])]);
    expect(framer.push(bytes.subarray(0, 9))).toEqual([]);
    expect(framer.pendingBytes).toBe(9);
    const events = framer.push(bytes.subarray(9, 15));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ kind: 'frame', frame: { transactionId: 1, protocolId: 0, unit: 1 } });
    expect(framer.push(bytes.subarray(15))).toHaveLength(1);
    expect(framer.pendingBytes).toBe(0);
  });

  it.each([0, 1, 255, 65535])('declares the stream out of step at MBAP length %i and drops everything', (length) => {
    const framer = new MbapFramer();
    const events = framer.push(Buffer.concat([frame(1, length, [1, 3]), Buffer.alloc(40)]));
    expect(events).toEqual([{ kind: 'desync', reason: `MBAP length ${length} outside 2..254` }]);
    expect(framer.pendingBytes).toBe(0);
  });
});
