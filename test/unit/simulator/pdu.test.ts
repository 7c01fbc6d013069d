import { describe, expect, it } from 'vitest';
import { UnitMemory } from '../../../packages/simulator/src/memory.js';
import { describeRequest, handlePdu, type InjectedException } from '../../../packages/simulator/src/pdu.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

function memory(): UnitMemory {
  const m = new UnitMemory({ coil: 100, discrete: 100, holding: 200, input: 200 });
  [1, 0, 1, 1, 0, 0, 0, 0, 1].forEach((v, i) => m.coil.set(i, v));
  [0, 1].forEach((v, i) => m.discrete.set(i, v));
  [0x1234, 0x5678, 0x9abc].forEach((v, i) => m.holding.set(i, v));
  m.input.set(0, 0xffff);
  m.holding.set(199, 7);
  return m;
}

describe('a register answered differently to a read of it alone (the EM24_E1\'s code at 000Bh)', () => {
  const m = new UnitMemory({ input: 100 });
  [0x0960, 0x0001].forEach((v, i) => m.input.set(0x0a + i, v));
  m.input.setAlone(0x0b, 1648);
  it.each([
    ['read alone: the code', '04 000B 0001', '04 02 0670'],
    ['read with the word before: the measurement', '04 000A 0002', '04 04 0960 0001'],
    ['read from it onwards: the measurement', '04 000B 0002', '04 04 0001 0000'],
    ['the word before alone: unchanged', '04 000A 0001', '04 02 0960'],
  ])('%s', (_name, request, response) => {
    expect(handlePdu(m, hex(request)).response.toString('hex')).toBe(hex(response).toString('hex'));
  });
});

describe('handlePdu reads', () => {
  it.each([
    ['FC1 9 coils', '01 0000 0009', '01 02 0D 01'],
    ['FC1 one coil at 2', '01 0002 0001', '01 01 01'],
    ['FC2 2 discretes', '02 0000 0002', '02 01 02'],
    ['FC3 3 registers', '03 0000 0003', '03 06 1234 5678 9ABC'],
    ['FC3 last register', '03 00C7 0001', '03 02 0007'],
    ['FC4 1 input', '04 0000 0001', '04 02 FFFF'],
    ['FC3 unwritten reads 0', '03 0050 0002', '03 04 0000 0000'],
  ])('%s', (_name, request, response) => {
    const result = handlePdu(memory(), hex(request));
    expect(result.response.toString('hex')).toBe(hex(response).toString('hex'));
    expect(result.exception).toBeUndefined();
  });
});

describe('handlePdu writes', () => {
  it.each([
    ['FC5 coil on', '05 0004 FF00', '05 0004 FF00', (m: UnitMemory) => m.coil.get(4), 1],
    ['FC5 coil off', '05 0000 0000', '05 0000 0000', (m: UnitMemory) => m.coil.get(0), 0],
    ['FC6 register', '06 0001 ABCD', '06 0001 ABCD', (m: UnitMemory) => m.holding.get(1), 0xabcd],
    ['FC15 3 coils', '0F 0010 0003 01 05', '0F 0010 0003', (m: UnitMemory) => m.coil.get(12), 0],
    ['FC15 bit 2 set', '0F 0010 0003 01 05', '0F 0010 0003', (m: UnitMemory) => m.coil.get(18), 1],
    ['FC16 2 registers', '10 0005 0002 04 0001 0002', '10 0005 0002', (m: UnitMemory) => m.holding.get(6), 2],
    ['FC22 mask write', '16 0000 F0F0 0F0F', '16 0000 F0F0 0F0F', (m: UnitMemory) => m.holding.get(0), 0x1f3f],
  ])('%s', (_name, request, response, read, expected) => {
    const m = memory();
    const result = handlePdu(m, hex(request));
    expect(result.response.toString('hex')).toBe(hex(response).toString('hex'));
    expect(result.wrote).toBe(true);
    expect(read(m)).toBe(expected);
  });

  it('FC23 writes first, then reads', () => {
    const m = memory();
    const result = handlePdu(m, hex('17 0000 0002 0001 0001 02 BEEF'));
    expect(result.response.toString('hex')).toBe('1704' + '1234beef');
    expect(m.holding.get(1)).toBe(0xbeef);
  });
});

describe('handlePdu exceptions', () => {
  it.each([
    ['unknown function', '2B 0E 01 00', 0xab, 1],
    ['FC8 not supported', '08 0000 1234', 0x88, 1],
    ['empty PDU', '', 0x80, 1],
    ['FC3 count 0', '03 0000 0000', 0x83, 3],
    ['FC3 count 126', '03 0000 007E', 0x83, 3],
    ['FC3 short PDU', '03 0000', 0x83, 3],
    ['FC1 count 2001', '01 0000 07D1', 0x81, 3],
    ['FC3 beyond table', '03 00C7 0002', 0x83, 2],
    ['FC4 start beyond table', '04 00C8 0001', 0x84, 2],
    ['FC1 beyond table', '01 0060 0005', 0x81, 2],
    ['FC5 bad value', '05 0000 1234', 0x85, 3],
    ['FC5 beyond table', '05 0064 FF00', 0x85, 2],
    ['FC6 beyond table', '06 00C8 0001', 0x86, 2],
    ['FC15 byte count mismatch', '0F 0000 0009 01 FF', 0x8f, 3],
    ['FC16 count 124', '10 0000 007C F8' + '00'.repeat(248), 0x90, 3],
    ['FC16 byte count mismatch', '10 0000 0002 02 0001', 0x90, 3],
    ['FC16 beyond table', '10 00C7 0002 04 0001 0002', 0x90, 2],
    ['FC23 write count 122', '17 0000 0001 0000 007A F4' + '00'.repeat(244), 0x97, 3],
  ])('%s -> %s code %i', (_name, request, fc, code) => {
    const m = memory();
    const before = m.holding.get(0);
    const result = handlePdu(m, hex(request));
    expect([...result.response]).toEqual([fc, code]);
    expect(result.exception).toBe(code);
    expect(result.wrote).toBe(false);
    expect(m.holding.get(0)).toBe(before);
  });
});

describe('injected exceptions', () => {
  it.each<[string, InjectedException, string, number | undefined]>([
    ['all requests', { code: 4 }, '03 0000 0001', 4],
    ['busy for writes only: read passes', { code: 6, functions: [6, 16] }, '03 0000 0001', undefined],
    ['busy for writes only: write refused', { code: 6, functions: [6, 16] }, '06 0000 0001', 6],
    ['table filter miss', { code: 2, table: 'input' }, '03 0000 0001', undefined],
    ['table filter hit', { code: 2, table: 'input' }, '04 0000 0001', 2],
    ['address range overlaps', { code: 2, address: 10, count: 5 }, '03 0008 0003', 2],
    ['address range before', { code: 2, address: 10, count: 5 }, '03 0000 000A', undefined],
    ['address range after', { code: 2, address: 10, count: 5 }, '03 000F 0002', undefined],
  ])('%s', (_name, injected, request, code) => {
    const m = memory();
    const result = handlePdu(m, hex(request), injected);
    expect(result.exception).toBe(code);
    if (code !== undefined) {
      expect(result.response[1]).toBe(code);
      expect(m.holding.get(0)).toBe(0x1234);
    }
  });
});

describe('describeRequest', () => {
  it.each([
    ['03 0010 0004', { fc: 3, table: 'holding', address: 16, count: 4 }],
    ['02 0001 0008', { fc: 2, table: 'discrete', address: 1, count: 8 }],
    ['05 0003 FF00', { fc: 5, table: 'coil', address: 3, count: 1 }],
    ['10 0001 0002 04 00000000', { fc: 16, table: 'holding', address: 1, count: 2 }],
    ['2B 0E', { fc: 0x2b }],
  ])('%s', (request, scope) => {
    expect(describeRequest(hex(request))).toEqual(scope);
  });
});
