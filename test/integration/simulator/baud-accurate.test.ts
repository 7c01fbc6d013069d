// Baud-accurate mode: replies never come sooner than a real line would allow. Lower bounds only:
// a loaded machine may always be slower, never faster.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeRtuFrame, encodeRtuFrame } from '../../../src/core/modbus/rtu-frame.js';
import { createPtyPair, lineTiming, startSimulation, type PtyPair, type Simulation } from '../../../packages/simulator/src/index.js';
import { waitFor } from '../../helpers/wait.js';
import { RawSerialMaster, RawTcpClient, logger, mapFrom, mbpoll, nowMicros } from './sim-helpers.js';

const MAP = mapFrom('units: { 1: { holding: { start: 0, values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] } }, 2: {} }');
const READ_10 = encodeRtuFrame(1, Buffer.from('030000000a', 'hex'));
const REPLY_BYTES = 3 + 20 + 2;

for (const baud of [9600, 115200]) {
  describe(`baud-accurate RTU on a pty at ${baud} 8E1`, () => {
    const line = { baud, parity: 'even', dataBits: 8, stopBits: 1 } as const;
    const timing = lineTiming(line);
    let pty: PtyPair;
    let sim: Simulation;
    let master: RawSerialMaster;
    beforeAll(async () => {
      pty = await createPtyPair();
      sim = await startSimulation({ map: MAP, logger, rtu: { path: pty.a }, line, baudAccurate: true });
      master = await RawSerialMaster.open(pty.b, baud);
    });
    afterAll(async () => {
      await master?.close();
      await sim?.close();
      await pty?.close();
    });

    async function transaction(): Promise<number> {
      master.clear();
      const start = nowMicros();
      await master.write(READ_10);
      await waitFor(() => master.bytes().length >= REPLY_BYTES, { what: 'reply' });
      expect(decodeRtuFrame(master.bytes())).toMatchObject({ ok: true, unit: 1 });
      return master.lastChunkMicros - start;
    }

    it('one transaction takes at least request + t3.5 + reply on the wire', async () => {
      expect(await transaction()).toBeGreaterThanOrEqual(timing.replyDoneMicros(READ_10.length, REPLY_BYTES));
    });

    it('back-to-back transactions never beat the line rate', async () => {
      const start = nowMicros();
      for (let i = 0; i < 10; i += 1) await transaction();
      const total = nowMicros() - start;
      // Each next request waits for the t3.5 after the previous reply.
      const minimum = 10 * timing.replyDoneMicros(READ_10.length, REPLY_BYTES) + 9 * timing.t35Micros;
      expect(total).toBeGreaterThanOrEqual(minimum);
    });

    it('pipelined requests are serialised on the simulated line', async () => {
      master.clear();
      const start = nowMicros();
      await master.write(Buffer.concat([READ_10, READ_10, READ_10, READ_10]));
      await waitFor(() => master.bytes().length >= 4 * REPLY_BYTES, { what: 'four replies' });
      const minimum = 3 * timing.transactionMicros(READ_10.length, REPLY_BYTES) + timing.replyDoneMicros(READ_10.length, REPLY_BYTES);
      expect(master.lastChunkMicros - start).toBeGreaterThanOrEqual(minimum);
    });
  });
}

describe('baud-accurate RTU with mbpoll', () => {
  let pty: PtyPair;
  let sim: Simulation;
  beforeAll(async () => {
    pty = await createPtyPair();
    sim = await startSimulation({ map: MAP, logger, rtu: { path: pty.a }, line: { baud: 9600, parity: 'even', dataBits: 8, stopBits: 1 }, baudAccurate: true });
  });
  afterAll(async () => {
    await sim?.close();
    await pty?.close();
  });

  it('still reads correctly', async () => {
    const result = await mbpoll(['-m', 'rtu', '-b', '9600', '-P', 'even', '-a', '1', '-0', '-r', '0', '-c', '10', '-t', '4', pty.b]);
    expect([...result.values.values()]).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
  });
});

describe('RTU over TCP', () => {
  const line = { baud: 19200, parity: 'none', dataBits: 8, stopBits: 2 } as const;
  const timing = lineTiming(line);
  let sim: Simulation;
  let port: number;
  beforeAll(async () => {
    sim = await startSimulation({ map: MAP, logger, rtuOverTcp: { host: '127.0.0.1', port: 0 }, line, baudAccurate: true });
    port = sim.rtuOverTcp?.port ?? 0;
  });
  afterAll(async () => { await sim?.close(); });

  it('answers RTU frames on a TCP socket, paced like the line, and ignores bad CRC', async () => {
    const client = await RawTcpClient.connect(port);
    try {
      const bad = Buffer.from(READ_10);
      bad[2] ^= 1;
      client.socket.write(bad);
      await waitFor(() => sim.simulator.line.badCrc === 1, { what: 'bad frame counted' });
      const start = nowMicros();
      client.socket.write(READ_10);
      await waitFor(() => client.bytes().length >= REPLY_BYTES, { what: 'reply' });
      expect(decodeRtuFrame(client.bytes())).toMatchObject({ ok: true, unit: 1 });
      expect(client.lastChunkMicros - start).toBeGreaterThanOrEqual(timing.replyDoneMicros(READ_10.length, REPLY_BYTES));
    } finally {
      client.close();
    }
  });

  it('connections share one simulated line', async () => {
    const [a, b] = await Promise.all([RawTcpClient.connect(port), RawTcpClient.connect(port)]);
    try {
      await waitFor(() => (sim.rtuOverTcp?.connections() ?? 0) >= 2, { what: 'two connections' });
      const start = nowMicros();
      a.socket.write(READ_10);
      b.socket.write(READ_10);
      await waitFor(() => a.bytes().length >= REPLY_BYTES && b.bytes().length >= REPLY_BYTES, { what: 'both replies' });
      const last = Math.max(a.lastChunkMicros, b.lastChunkMicros) - start;
      expect(last).toBeGreaterThanOrEqual(timing.transactionMicros(READ_10.length, REPLY_BYTES) + timing.replyDoneMicros(READ_10.length, REPLY_BYTES));
    } finally {
      a.close();
      b.close();
    }
  });
});
