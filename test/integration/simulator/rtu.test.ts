import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeRtuFrame, encodeRtuFrame } from '../../../src/core/modbus/rtu-frame.js';
import { createPtyPair, startSimulation, type PtyPair, type Simulation } from '../../../packages/simulator/src/index.js';
import { waitFor } from '../../helpers/wait.js';
import { RawSerialMaster, logger, mapFrom, mbpoll } from './sim-helpers.js';

// Two units on one line (multi-drop).
const MAP = mapFrom(`
units:
  1:
    size: { holding: 100 }
    holding: { 0: 101, 1: 102 }
  2:
    holding: { 0: 201, 1: 202 }
`);
const LINE = { baud: 9600, parity: 'even', dataBits: 8, stopBits: 1 } as const;

describe('RTU server on a pty with mbpoll as the master', () => {
  let pty: PtyPair;
  let sim: Simulation;
  beforeAll(async () => {
    pty = await createPtyPair();
    sim = await startSimulation({ map: MAP, logger, rtu: { path: pty.a }, line: LINE });
  });
  afterAll(async () => {
    await sim?.close();
    await pty?.close();
  });

  const rtu = (...args: string[]) => ['-m', 'rtu', '-b', '9600', '-P', 'even', '-0', '-t', '4', ...args, pty.b];

  it('answers each unit on the line with its own values', async () => {
    const one = await mbpoll(rtu('-a', '1', '-r', '0', '-c', '2'));
    const two = await mbpoll(rtu('-a', '2', '-r', '0', '-c', '2'));
    expect([...one.values.values()]).toEqual(['101', '102']);
    expect([...two.values.values()]).toEqual(['201', '202']);
  });

  it('leaves unit ids it does not have unanswered', async () => {
    const result = await mbpoll(rtu('-a', '3', '-r', '0', '-o', '0.3'));
    expect(result.stderr).toMatch(/timed out/i);
    expect(sim.simulator.line.foreignUnit).toBeGreaterThan(0);
  });

  it('takes a write', async () => {
    expect((await mbpoll([...rtu('-a', '2', '-r', '5'), '4321'])).code).toBe(0);
    expect(sim.simulator.getRegister(2, 'holding', 5)).toBe(4321);
  });

  it('answers illegal data address beyond the map size', async () => {
    const result = await mbpoll(rtu('-a', '1', '-r', '99', '-c', '2'));
    expect(result.stderr).toContain('Illegal data address');
  });

  it('shows an injected exception, a timeout and a garbled reply to mbpoll', async () => {
    try {
      sim.simulator.setFault(1, { exception: { code: 6 } });
      expect((await mbpoll(rtu('-a', '1', '-r', '0'))).stderr).toMatch(/busy/i);
      sim.simulator.setFault(1, { timeout: true });
      expect((await mbpoll(rtu('-a', '1', '-r', '0', '-o', '0.3'))).stderr).toMatch(/timed out/i);
      sim.simulator.setFault(1, { garble: true });
      expect((await mbpoll(rtu('-a', '1', '-r', '0', '-o', '0.3'))).stderr).toMatch(/CRC/i);
      expect((await mbpoll(rtu('-a', '2', '-r', '0'))).values.get(0)).toBe('201');
    } finally {
      sim.simulator.clearFault(1);
    }
  });

  it('a unit that disappears comes back by itself', async () => {
    sim.simulator.setFault(2, { disappear: { forMs: 1500 } });
    try {
      expect((await mbpoll(rtu('-a', '2', '-r', '0', '-o', '0.2'))).code).not.toBe(0);
      const back = await waitFor(async () => {
        const result = await mbpoll(rtu('-a', '2', '-r', '0', '-o', '0.2'));
        return result.code === 0 && result;
      }, { what: 'unit 2 back' });
      expect(back.values.get(0)).toBe('201');
    } finally {
      sim.simulator.clearFault(2);
    }
  });
});

describe('RTU server on a pty with a raw master', () => {
  let pty: PtyPair;
  let sim: Simulation;
  let master: RawSerialMaster;
  beforeAll(async () => {
    pty = await createPtyPair();
    sim = await startSimulation({ map: MAP, logger, rtu: { path: pty.a }, line: LINE });
    master = await RawSerialMaster.open(pty.b);
  });
  afterAll(async () => {
    await master?.close();
    await sim?.close();
    await pty?.close();
  });

  const request = (unit: number) => encodeRtuFrame(unit, Buffer.from('0300000001', 'hex'));

  it('ignores a request with a bad CRC, like a real device', async () => {
    const bad = request(1);
    bad[bad.length - 1] ^= 0x5a;
    master.clear();
    await master.write(bad);
    await waitFor(() => sim.simulator.line.badCrc === 1, { what: 'bad frame counted' });
    await master.write(request(1));
    await waitFor(() => master.bytes().length >= 7, { what: 'reply' });
    expect(decodeRtuFrame(master.bytes())).toEqual({ ok: true, unit: 1, pdu: Buffer.from('03020065', 'hex') });
    expect(sim.simulator.counters(1).requests).toBe(1);
  });

  it('answers only its own units when frames for several units arrive back to back', async () => {
    master.clear();
    await master.write(Buffer.concat([request(9), request(2), request(1)]));
    await waitFor(() => master.bytes().length >= 14, { what: 'two replies' });
    const bytes = master.bytes();
    expect([decodeRtuFrame(bytes.subarray(0, 7)), decodeRtuFrame(bytes.subarray(7, 14))]).toMatchObject([
      { ok: true, unit: 2 }, { ok: true, unit: 1 },
    ]);
  });
});
