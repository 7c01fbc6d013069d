import { describe, expect, it } from 'vitest';
import { encodeRtuFrame } from '../../../src/core/modbus/rtu-frame.js';
import { RtuAssembler } from '../../../packages/simulator/src/rtu-assembler.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const read = encodeRtuFrame(1, hex('03 0000 000A'));
const write16 = encodeRtuFrame(2, hex('10 0000 0002 04 0001 0002'));
const unknown = encodeRtuFrame(1, hex('2B 0E 01 00'));
const SILENCE = 20_000;

describe('RtuAssembler', () => {
  it('cuts a frame delivered in one chunk', () => {
    const a = new RtuAssembler(SILENCE);
    expect(a.push(read, 0)).toEqual([{ kind: 'frame', unit: 1, pdu: hex('03 0000 000A'), bytes: 8 }]);
    expect(a.buffered).toBe(0);
  });

  it('assembles a frame split byte by byte', () => {
    const a = new RtuAssembler(SILENCE);
    const out = [...write16].flatMap((byte, i) => a.push(Buffer.from([byte]), i * 100));
    expect(out).toEqual([{ kind: 'frame', unit: 2, pdu: hex('10 0000 0002 04 0001 0002'), bytes: 13 }]);
  });

  it('cuts back-to-back frames from one chunk', () => {
    const a = new RtuAssembler(SILENCE);
    const out = a.push(Buffer.concat([read, write16, read]), 0);
    expect(out.map((f) => f.kind === 'frame' && f.unit)).toEqual([1, 2, 1]);
  });

  it('drops a bad-CRC frame and still reads the next one', () => {
    const a = new RtuAssembler(SILENCE);
    const bad = Buffer.from(read);
    bad[7] ^= 1;
    const out = a.push(Buffer.concat([bad, read]), 0);
    expect(out).toEqual([{ kind: 'bad-frame', reason: 'bad-crc', bytes: 8 }, expect.objectContaining({ kind: 'frame', unit: 1 })]);
  });

  it('drops a partial frame after line silence, then reads a new one', () => {
    const a = new RtuAssembler(SILENCE);
    expect(a.push(read.subarray(0, 5), 0)).toEqual([]);
    const out = a.push(read, SILENCE + 1);
    expect(out).toEqual([{ kind: 'bad-frame', reason: 'truncated', bytes: 5 }, expect.objectContaining({ kind: 'frame' })]);
  });

  it('ends an unknown-length frame at silence', () => {
    const a = new RtuAssembler(SILENCE);
    expect(a.push(unknown, 0)).toEqual([]);
    expect(a.flush()).toEqual([{ kind: 'frame', unit: 1, pdu: hex('2B 0E 01 00'), bytes: 7 }]);
  });

  it('drops line noise longer than any frame', () => {
    const a = new RtuAssembler(SILENCE);
    const noise = Buffer.alloc(300, 0x2b);
    expect(a.push(noise, 0)).toEqual([{ kind: 'bad-frame', reason: 'too-long', bytes: 300 }]);
    expect(a.buffered).toBe(0);
  });
});
