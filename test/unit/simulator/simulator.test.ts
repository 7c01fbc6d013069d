import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/ops/log.js';
import { parseSimMap } from '../../../packages/simulator/src/map-file.js';
import { Simulator } from '../../../packages/simulator/src/simulator.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

function build(yaml: string) {
  const parsed = parseSimMap(yaml);
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  const clock = { now: 10_000 };
  const sim = new Simulator(parsed.map, { logger: silentLogger(), clock: () => clock.now, random: () => 0.5 });
  return { sim, clock };
}

const MAP = `
units:
  1:
    holding: { 0: 11, 1: 12 }
    dynamic:
      - { table: input, address: 0, counter: { perSecond: 2 } }
  2:
    holding: { 0: 21 }
`;

describe('Simulator', () => {
  it('answers each unit from its own memory and counts requests', () => {
    const { sim } = build(MAP);
    expect(sim.handle(1, hex('03 0000 0001'))).toEqual({ kind: 'reply', pdu: hex('03 02 000B'), delayMs: 0, garble: false });
    expect(sim.handle(2, hex('03 0000 0001'))).toMatchObject({ pdu: hex('03 02 0015') });
    expect(sim.handle(2, hex('03 FFFF 0002'))).toMatchObject({ pdu: hex('83 02') });
    expect(sim.counters(1)).toEqual({ requests: 1, replies: 1, exceptions: 0, dropped: 0, garbled: 0 });
    expect(sim.counters(2)).toMatchObject({ requests: 2, exceptions: 1 });
  });

  it('ignores unknown units and counts them', () => {
    const { sim } = build(MAP);
    expect(sim.handle(9, hex('03 0000 0001'))).toEqual({ kind: 'drop', reason: 'unknown-unit' });
    expect(sim.line.foreignUnit).toBe(1);
  });

  it('executes a broadcast write on every unit without answering', () => {
    const { sim } = build(MAP);
    expect(sim.handle(0, hex('06 0005 0063'))).toEqual({ kind: 'drop', reason: 'broadcast' });
    expect(sim.getRegister(1, 'holding', 5)).toBe(99);
    expect(sim.getRegister(2, 'holding', 5)).toBe(99);
  });

  it('applies and clears faults', () => {
    const { sim, clock } = build(MAP);
    sim.setFault(1, { timeout: true });
    expect(sim.handle(1, hex('03 0000 0001'))).toEqual({ kind: 'drop', reason: 'timeout' });
    expect(sim.isAnswering(1)).toBe(false);
    sim.setFault(1, { slowMs: 40, exception: { code: 6 } });
    expect(sim.handle(1, hex('03 0000 0001'))).toEqual({ kind: 'reply', pdu: hex('83 06'), delayMs: 40, garble: false });
    sim.setFault(1, { disappear: { forMs: 1000 } });
    expect(sim.handle(1, hex('03 0000 0001')).kind).toBe('drop');
    clock.now += 1000;
    expect(sim.handle(1, hex('03 0000 0001')).kind).toBe('reply');
    sim.setFault(1, { garble: true });
    expect(sim.handle(1, hex('03 0000 0001'))).toMatchObject({ garble: true });
    sim.clearFault(1);
    expect(sim.faultOf(1)).toBeUndefined();
    expect(sim.handle(1, hex('03 0000 0001'))).toMatchObject({ kind: 'reply', garble: false, delayMs: 0 });
    expect(sim.counters(1)).toMatchObject({ requests: 6, dropped: 2, garbled: 1, exceptions: 1 });
  });

  it('loads faults from the map', () => {
    const { sim } = build('units: { 4: { faults: { exception: { code: 2, table: holding } } } }');
    expect(sim.handle(4, hex('03 0000 0001'))).toMatchObject({ pdu: hex('83 02') });
    expect(sim.handle(4, hex('04 0000 0001'))).toMatchObject({ pdu: hex('04 02 0000') });
  });

  it('rejects invalid faults and unknown units with clear errors', () => {
    const { sim } = build(MAP);
    expect(() => sim.setFault(1, { slowMs: -5 })).toThrow('invalid fault for unit 1: fault.slowMs: must be a number >= 0');
    expect(() => sim.setFault(7, { timeout: true })).toThrow('no unit 7 in this simulator (units: 1, 2)');
  });

  it('sets and gets registers, bits and typed values', () => {
    const { sim } = build(MAP);
    sim.setRegister(1, 'holding', 3, -1);
    sim.setRegister(1, 'coil', 3, true);
    sim.setTyped(1, 'holding', 10, { type: 'float32', value: 1 });
    expect(sim.getRegisters(1, 'holding', 3, 1)).toEqual([0xffff]);
    expect(sim.getRegister(1, 'coil', 3)).toBe(1);
    expect(sim.getRegisters(1, 'holding', 10, 2)).toEqual([0x3f80, 0]);
    expect(sim.handle(1, hex('01 0003 0001'))).toMatchObject({ pdu: hex('01 01 01') });
    expect(() => sim.setRegister(1, 'holding', 0, 70000)).toThrow('register value must be an integer');
    expect(() => sim.setTyped(1, 'holding', 0, { type: 'uint16', value: -1 })).toThrow('out of uint16 range');
  });

  it('moves dynamic registers with the clock', () => {
    const { sim, clock } = build(MAP);
    expect(sim.getRegister(1, 'input', 0)).toBe(0);
    clock.now += 1500;
    expect(sim.handle(1, hex('04 0000 0001'))).toMatchObject({ pdu: hex('04 02 0003') });
    sim.addDynamic(1, { table: 'input', address: 0, counter: { start: 100 } });
    expect(sim.getRegister(1, 'input', 0)).toBe(101);
  });
});
