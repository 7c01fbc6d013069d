import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeMbapFrame, splitMbapFrame } from '../../../packages/simulator/src/frames.js';
import { startSimulation, type Simulation } from '../../../packages/simulator/src/index.js';
import { waitFor } from '../../helpers/wait.js';
import { RawTcpClient, logger, mapFrom, mbpoll } from './sim-helpers.js';

const MAP = mapFrom(`
units:
  1:
    size: { holding: 100, input: 100, coil: 100 }
    holding:
      - { start: 0, values: [10, 11, 12, 13, 14, 15, 16, 17, 18, 19] }
      - { address: 20, type: float32, value: 230.5 }
    coil: { 3: true }
  2:
    holding: { 0: 2000 }
`);

let sim: Simulation;
let port: number;

beforeAll(async () => {
  sim = await startSimulation({ map: MAP, logger, tcp: { host: '127.0.0.1', port: 0 } });
  port = sim.tcp?.port ?? 0;
});
afterAll(async () => { await sim.close(); });

const tcp = (...args: string[]) => ['-m', 'tcp', '-p', String(port), ...args, '127.0.0.1'];

describe('Modbus TCP server with mbpoll as the master', () => {
  it('listens on an ephemeral port', () => {
    expect(port).toBeGreaterThan(0);
  });

  it('reads 10 holding registers (1-based references)', async () => {
    const result = await mbpoll(tcp('-a', '1', '-r', '1', '-c', '10', '-t', '4'));
    expect(result.code).toBe(0);
    expect([...result.values.values()]).toEqual(['10', '11', '12', '13', '14', '15', '16', '17', '18', '19']);
  });

  it('reads a float with 0-based addressing', async () => {
    const result = await mbpoll(tcp('-a', '1', '-0', '-r', '20', '-c', '1', '-t', '4:float', '-B'));
    expect(result.values.get(20)).toBe('230.5');
  });

  it('answers each unit from its own map', async () => {
    const result = await mbpoll(tcp('-a', '2', '-0', '-r', '0', '-t', '4'));
    expect(result.values.get(0)).toBe('2000');
  });

  it('takes writes of registers and coils', async () => {
    expect((await mbpoll([...tcp('-a', '1', '-0', '-r', '50', '-t', '4'), '65529', '300'])).code).toBe(0);
    expect(sim.simulator.getRegisters(1, 'holding', 50, 2)).toEqual([0xfff9, 300]);
    expect((await mbpoll([...tcp('-a', '1', '-0', '-r', '7', '-t', '0'), '1'])).code).toBe(0);
    expect(sim.simulator.getRegister(1, 'coil', 7)).toBe(1);
  });

  it('reads coils', async () => {
    const result = await mbpoll(tcp('-a', '1', '-0', '-r', '0', '-c', '4', '-t', '0'));
    expect([...result.values.values()]).toEqual(['0', '0', '0', '1']);
  });

  it('answers illegal data address outside the map', async () => {
    const result = await mbpoll(tcp('-a', '1', '-0', '-r', '99', '-c', '2', '-t', '4'));
    expect(result.stderr).toContain('Illegal data address');
  });

  it('shows an injected exception to mbpoll', async () => {
    sim.simulator.setFault(1, { exception: { code: 4 } });
    try {
      const result = await mbpoll(tcp('-a', '1', '-r', '1', '-t', '4'));
      expect(result.stderr).toMatch(/Slave device or server failure/i);
    } finally {
      sim.simulator.clearFault(1);
    }
  });

  it('times out mbpoll for a unit with the timeout fault, others keep answering', async () => {
    sim.simulator.setFault(2, { timeout: true });
    try {
      const dead = await mbpoll(tcp('-a', '2', '-r', '1', '-t', '4', '-o', '0.3'));
      expect(dead.stderr).toMatch(/timed out/i);
      const alive = await mbpoll(tcp('-a', '1', '-r', '1', '-t', '4'));
      expect(alive.values.get(1)).toBe('10');
    } finally {
      sim.simulator.clearFault(2);
    }
  });

  it('counts requests per unit', () => {
    expect(sim.simulator.counters(1).requests).toBeGreaterThan(5);
  });
});

describe('Modbus TCP server with raw clients', () => {
  const read = (tid: number, unit: number, address: number) =>
    encodeMbapFrame(tid, unit, Buffer.from([3, address >> 8, address & 0xff, 0, 1]));

  function replies(bytes: Buffer) {
    const out: Array<{ tid: number; unit: number; pdu: string }> = [];
    let rest = bytes;
    for (;;) {
      const split = splitMbapFrame(rest);
      if (split.kind !== 'frame') return out;
      out.push({ tid: split.header.transactionId, unit: split.header.unit, pdu: split.pdu.toString('hex') });
      rest = split.rest;
    }
  }

  it('answers pipelined requests in order, even when one unit is slow', async () => {
    sim.simulator.setFault(2, { slowMs: 80 });
    const client = await RawTcpClient.connect(port);
    try {
      const frames = Array.from({ length: 20 }, (_, i) => (i === 3 ? read(i + 1, 2, 0) : read(i + 1, 1, i % 10)));
      client.socket.write(Buffer.concat(frames));
      const got = await waitFor(() => { const r = replies(client.bytes()); return r.length === 20 && r; }, { what: '20 replies' });
      expect(got.map((r) => r.tid)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(got[3]).toEqual({ tid: 4, unit: 2, pdu: '030207d0' });
      expect(got[5].pdu).toBe('0302000f');
    } finally {
      client.close();
      sim.simulator.clearFault(2);
    }
  });

  it('serves many concurrent connections', async () => {
    const clients = await Promise.all(Array.from({ length: 40 }, () => RawTcpClient.connect(port)));
    try {
      await waitFor(() => (sim.tcp?.connections() ?? 0) >= 40, { what: '40 connections' });
      clients.forEach((c, i) => c.socket.write(Buffer.concat([read(i, 1, 0), read(i + 1000, 1, 1)])));
      await waitFor(() => clients.every((c) => replies(c.bytes()).length === 2), { what: 'all replies' });
      for (const [i, c] of clients.entries()) {
        expect(replies(c.bytes()).map((r) => [r.tid, r.pdu])).toEqual([[i, '0302000a'], [i + 1000, '0302000b']]);
      }
    } finally {
      clients.forEach((c) => c.close());
    }
  });

  it('skips dropped requests without blocking later ones', async () => {
    sim.simulator.setFault(2, { timeout: true });
    const client = await RawTcpClient.connect(port);
    try {
      client.socket.write(Buffer.concat([read(1, 2, 0), read(2, 1, 0)]));
      const got = await waitFor(() => { const r = replies(client.bytes()); return r.length === 1 && r; }, { what: 'one reply' });
      expect(got[0].tid).toBe(2);
    } finally {
      client.close();
      sim.simulator.clearFault(2);
    }
  });

  it('garbles a reply by answering with a transaction id never sent', async () => {
    sim.simulator.setFault(1, { garble: true });
    const client = await RawTcpClient.connect(port);
    try {
      client.socket.write(read(5, 1, 0));
      const got = await waitFor(() => { const r = replies(client.bytes()); return r.length === 1 && r; }, { what: 'garbled reply' });
      expect(got[0].tid).not.toBe(5);
    } finally {
      client.close();
      sim.simulator.clearFault(1);
    }
  });

  it('closes a connection that sends a malformed MBAP header', async () => {
    const client = await RawTcpClient.connect(port);
    client.socket.write(Buffer.from('00010007000601030000000a', 'hex'));
    await waitFor(() => client.closed, { what: 'connection closed' });
    expect(client.bytes().length).toBe(0);
  });
});
