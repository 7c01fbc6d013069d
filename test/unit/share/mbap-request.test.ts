// Server-side MBAP, table-driven: request PDUs -> request or the standard's exception; answer
// frames byte for byte; hostile streams through the framer (garbage, truncated, length 65535).
import { describe, expect, it } from 'vitest';
import { MbapFramer } from '../../../src/core/modbus/mbap-framer.js';
import {
  EXCEPTION, exceptionPdu, mbapFrame, parseRequestPdu, readReplyPdu, writeReplyPdu,
} from '../../../src/core/modbus/mbap-request.js';

const hex = (text: string) => Buffer.from(text.replaceAll(' ', ''), 'hex');

describe('parseRequestPdu', () => {
  it.each([
    ['FC3 10 regs at 0x0100', '03 0100 000a', { kind: 'read', functionCode: 3, table: 'holding', start: 0x100, count: 10 }],
    ['FC4 one input', '04 0000 0001', { kind: 'read', functionCode: 4, table: 'input', start: 0, count: 1 }],
    ['FC1 2000 coils', '01 0000 07d0', { kind: 'read', functionCode: 1, table: 'coil', start: 0, count: 2000 }],
    ['FC2 to the last address', '02 ffff 0001', { kind: 'read', functionCode: 2, table: 'discrete', start: 65535, count: 1 }],
    ['FC5 on', '05 0007 ff00', { kind: 'write-coils', functionCode: 5, address: 7, values: [true] }],
    ['FC5 off', '05 0007 0000', { kind: 'write-coils', functionCode: 5, address: 7, values: [false] }],
    ['FC6', '06 0002 abcd', { kind: 'write-registers', functionCode: 6, address: 2, values: [0xabcd] }],
    ['FC16 two', '10 0004 0002 04 0001 ffff', { kind: 'write-registers', functionCode: 16, address: 4, values: [1, 0xffff] }],
    ['FC15 ten coils', '0f 0000 000a 02 cd 01', { kind: 'write-coils', functionCode: 15, address: 0, values: [true, false, true, true, false, false, true, true, true, false] }],
  ])('%s', (_name, pdu, request) => {
    expect(parseRequestPdu(hex(pdu))).toEqual({ ok: true, request });
  });

  it.each([
    ['empty PDU', '', 0, EXCEPTION.illegalFunction],
    ['FC0', '00 0000 0001', 0, EXCEPTION.illegalFunction],
    ['an exception code as request', '83 0000 0001', 3, EXCEPTION.illegalFunction],
    ['FC8 diagnostics', '08 0000 0000', 8, EXCEPTION.illegalFunction],
    ['FC23 read/write', '17 0000 0001 0000 0001 02 0000', 23, EXCEPTION.illegalFunction],
    ['FC43 device id', '2b 0e 01 00', 43, EXCEPTION.illegalFunction],
    ['FC3 truncated', '03 0000 00', 3, EXCEPTION.illegalDataValue],
    ['FC3 trailing byte', '03 0000 0001 00', 3, EXCEPTION.illegalDataValue],
    ['FC3 count 0', '03 0000 0000', 3, EXCEPTION.illegalDataValue],
    ['FC3 count 126', '03 0000 007e', 3, EXCEPTION.illegalDataValue],
    ['FC1 count 2001', '01 0000 07d1', 1, EXCEPTION.illegalDataValue],
    ['FC3 past 65535', '03 fff0 0020', 3, EXCEPTION.illegalDataAddress],
    ['FC5 value 0x1234', '05 0000 1234', 5, EXCEPTION.illegalDataValue],
    ['FC6 truncated', '06 0000', 6, EXCEPTION.illegalDataValue],
    ['FC16 byte count wrong', '10 0000 0002 03 0000 0000', 16, EXCEPTION.illegalDataValue],
    ['FC16 data short', '10 0000 0002 04 0000', 16, EXCEPTION.illegalDataValue],
    ['FC16 count 124', '10 0000 007c f8', 16, EXCEPTION.illegalDataValue],
    ['FC16 past 65535', '10 ffff 0002 04 0000 0000', 16, EXCEPTION.illegalDataAddress],
    ['FC15 byte count wrong', '0f 0000 0009 01 ff', 15, EXCEPTION.illegalDataValue],
  ])('refuses %s', (_name, pdu, functionCode, exception) => {
    expect(parseRequestPdu(hex(pdu))).toEqual({ ok: false, functionCode, exception });
  });
});

describe('answers', () => {
  it('frames a register read reply', () => {
    const request = { kind: 'read', functionCode: 3, table: 'holding', start: 0, count: 2 } as const;
    expect(mbapFrame(0x1234, 17, readReplyPdu(request, { words: Uint16Array.of(1, 0xbeef) })).toString('hex')).toBe('12340000000711' + '0304' + '0001beef');
  });

  it('packs bits LSB first', () => {
    const request = { kind: 'read', functionCode: 1, table: 'coil', start: 0, count: 10 } as const;
    const bits = [true, false, true, true, false, false, true, true, true, false];
    expect(readReplyPdu(request, { bits }).toString('hex')).toBe('0102cd01');
  });

  it.each([
    [{ kind: 'write-coils', functionCode: 5, address: 7, values: [true] } as const, '050007ff00'],
    [{ kind: 'write-registers', functionCode: 6, address: 2, values: [0xabcd] } as const, '060002abcd'],
    [{ kind: 'write-registers', functionCode: 16, address: 4, values: [1, 2, 3] } as const, '1000040003'],
    [{ kind: 'write-coils', functionCode: 15, address: 0, values: [true, false] } as const, '0f00000002'],
  ])('echoes write %o', (request, pdu) => {
    expect(writeReplyPdu(request).toString('hex')).toBe(pdu);
  });

  it('frames an exception', () => {
    expect(mbapFrame(1, 5, exceptionPdu(3, EXCEPTION.gatewayTargetNoResponse)).toString('hex')).toBe('000100000003058' + '30b');
  });
});

describe('hostile streams through the framer', () => {
  it('a length of 65535 desyncs at once', () => {
    const events = new MbapFramer().push(hex('0001 0000 ffff 01 03 0000 0001'));
    expect(events).toEqual([{ kind: 'desync', reason: 'MBAP length 65535 outside 2..254' }]);
  });

  it('garbage desyncs', () => {
    const events = new MbapFramer().push(Buffer.from('GET / HTTP/1.1\r\n\r\n'));
    expect(events.map((e) => e.kind)).toEqual(['desync']);
  });

  it('a truncated frame waits for the rest, then yields one frame', () => {
    const framer = new MbapFramer();
    expect(framer.push(hex('0001 0000 0006 01 03'))).toEqual([]);
    const events = framer.push(hex('00000001'));
    expect(events).toEqual([{ kind: 'frame', frame: { transactionId: 1, protocolId: 0, unit: 1, pdu: hex('0300000001') } }]);
  });

  it('reports a foreign protocol id for the server to refuse', () => {
    const [event] = new MbapFramer().push(hex('0001 0001 0006 01 03 0000 0001'));
    expect(event).toMatchObject({ kind: 'frame', frame: { protocolId: 1 } });
  });
});
