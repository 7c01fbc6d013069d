import { describe, expect, it } from 'vitest';
import { crc16, decodeRtuFrame, encodeRtuFrame } from '../../../src/core/modbus/rtu-frame.js';
import { corruptCrc, encodeMbapFrame, expectedRequestLength, splitMbapFrame } from '../../../packages/simulator/src/frames.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('crc16 (Modbus)', () => {
  it.each([
    ['01 03 00 00 00 0A', 'C5 CD'],
    ['11 03 00 6B 00 03', '76 87'],
    ['01 06 00 01 00 03', '98 0B'],
    ['01 04 00 00 00 0A', '70 0D'],
    ['01 10 00 01 00 02 04 00 0A 01 02', '92 30'],
  ])('%s -> %s (low byte first)', (frame, expected) => {
    const crc = crc16(hex(frame));
    expect(Buffer.from([crc & 0xff, crc >>> 8]).toString('hex')).toBe(expected.replace(/\s/g, '').toLowerCase());
  });

  it('of an empty input is the initial value', () => {
    expect(crc16(Buffer.alloc(0))).toBe(0xffff);
  });
});

describe('RTU frames', () => {
  it('encodes unit + PDU + CRC', () => {
    expect(encodeRtuFrame(1, hex('03 00 00 00 0A')).toString('hex')).toBe('01030000000ac5cd');
  });

  it.each([
    ['good frame', '01 03 00 00 00 0A C5 CD', { ok: true, unit: 1 }],
    ['bad crc', '01 03 00 00 00 0A C5 CE', { ok: false, reason: 'bad-crc' }],
    ['too short', '01 03 C5', { ok: false, reason: 'too-short' }],
  ])('decodes a %s', (_name, frame, expected) => {
    expect(decodeRtuFrame(hex(frame))).toMatchObject(expected);
  });

  it('round-trips and exposes the PDU', () => {
    const decoded = decodeRtuFrame(encodeRtuFrame(17, hex('10 00 01 00 01 02 AB CD')));
    expect(decoded).toEqual({ ok: true, unit: 17, pdu: hex('10 00 01 00 01 02 AB CD') });
  });

  it('corruptCrc makes the frame fail its CRC', () => {
    expect(decodeRtuFrame(corruptCrc(hex('01 03 00 00 00 0A C5 CD')))).toEqual({ ok: false, reason: 'bad-crc' });
  });
});

describe('expectedRequestLength', () => {
  it.each([
    ['empty', '', 'need-more'],
    ['unit only', '01', 'need-more'],
    ['FC3', '01 03', 8],
    ['FC5', '01 05', 8],
    ['FC8 diagnostics', '01 08', 8],
    ['FC7', '01 07', 4],
    ['FC16 before byte count', '01 10 00 00 00', 'need-more'],
    ['FC16 with 4 data bytes', '01 10 00 00 00 02 04', 13],
    ['FC15 with 1 data byte', '01 0F 00 00 00 03 01', 10],
    ['FC22', '01 16', 10],
    ['FC23 with 2 data bytes', '01 17 00 00 00 01 00 00 00 01 02', 15],
    ['unknown FC', '01 2B', 'unknown'],
  ])('%s', (_name, bytes, expected) => {
    expect(expectedRequestLength(hex(bytes))).toBe(expected);
  });
});

describe('MBAP', () => {
  it('encodes header + PDU', () => {
    expect(encodeMbapFrame(0x1234, 1, hex('03 02 00 2A')).toString('hex')).toBe('1234000000050103' + '02002a');
  });

  it('splits pipelined frames and keeps the rest', () => {
    const two = Buffer.concat([encodeMbapFrame(1, 1, hex('03 00 00 00 01')), encodeMbapFrame(2, 2, hex('04 00 00'))]);
    const first = splitMbapFrame(two);
    expect(first).toMatchObject({ kind: 'frame', header: { transactionId: 1, unit: 1, length: 6 } });
    if (first.kind !== 'frame') throw new Error('unreachable');
    expect(first.pdu.toString('hex')).toBe('0300000001');
    const second = splitMbapFrame(first.rest);
    expect(second).toMatchObject({ kind: 'frame', header: { transactionId: 2, unit: 2 } });
  });

  it.each([
    ['short header', '00 01 00 00 00', 'need-more'],
    ['partial body', '00 01 00 00 00 06 01 03 00', 'need-more'],
    ['wrong protocol id', '00 01 00 01 00 06 01 03 00 00 00 01', 'invalid'],
    ['length too small', '00 01 00 00 00 01 01', 'invalid'],
    ['length too large', '00 01 00 00 01 00 01', 'invalid'],
  ])('%s -> %s', (_name, bytes, kind) => {
    expect(splitMbapFrame(hex(bytes)).kind).toBe(kind);
  });
});
