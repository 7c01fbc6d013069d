// The inter-frame silence on the wire: fieldgate's bus against a strict, baud-accurate simulated
// line (socat pty), which ignores and counts every request that begins less than t3.5 after the
// previous frame. A loaded machine can only make the master later, never earlier, so the count
// must be 0 however slow the run; a raw master that answers at once shows the counter works.
import { afterEach, describe, expect, it } from 'vitest';
import { Bus } from '../../../src/field/modbus/bus.js';
import { createModbusTransport } from '../../../src/field/modbus/transport.js';
import { defaultInterFrameDelayMs } from '../../../src/core/config/buses.js';
import { encodeRtuFrame } from '../../../src/core/modbus/rtu-frame.js';
import { createPtyPair, startSimulation } from '../../../packages/simulator/src/index.js';
import { silentLogger } from '../../../src/ops/log.js';
import { rtuBusConfig } from '../../helpers/bus-configs.js';
import { waitFor } from '../../helpers/wait.js';
import { SerialPort } from 'serialport';
import { mapFrom } from '../simulator/sim-helpers.js';

const MAP = 'units: { 1: { holding: { 0: 11, 1: 12 } }, 2: { holding: { 0: 21, 1: 22 } } }';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function strictLine(baud: number) {
  const pty = await createPtyPair();
  cleanups.push(() => pty.close());
  const sim = await startSimulation({ map: mapFrom(MAP), logger: silentLogger(), rtu: { path: pty.b }, line: { baud, parity: 'even', dataBits: 8, stopBits: 1 }, baudAccurate: true, strict: true });
  cleanups.push(() => sim.close());
  return { pty, sim };
}

describe('RTU inter-frame silence (strict simulated line)', () => {
  it.each([115200, 19200])('%i baud: 200 back-to-back reads of two units, none sent before t3.5', async (baud) => {
    const { pty, sim } = await strictLine(baud);
    const config = rtuBusConfig({ path: pty.a, baudRate: baud, timeoutMs: 2000, interFrameDelayMs: defaultInterFrameDelayMs(baud, 8, 'even', 1) });
    const bus = new Bus({ config, transportFactory: createModbusTransport, logger: silentLogger() });
    cleanups.push(() => bus.stop());
    bus.start();
    await waitFor(() => bus.stats().state === 'up', { what: 'bus up' });
    const reads = Array.from({ length: 200 }, (_, i) => bus.read(1 + (i % 2), 'holding', 0, 2));
    const results = await Promise.all(reads);
    expect(results.map((r) => Array.from(r.words ?? []))).toEqual(Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? [11, 12] : [21, 22])));
    expect(sim.simulator.line.earlyRequests).toBe(0);
    expect(bus.stats()).toMatchObject({ timeouts: 0, frameErrors: 0, discardedReplies: 0 });
  }, 60_000);

  it('counts (and ignores) a request sent the moment the reply arrived', async () => {
    // 600 baud: t3.5 is 64 ms, so the immediate request lands inside it even on a loaded machine.
    const { pty, sim } = await strictLine(600);
    const port = new SerialPort({ path: pty.a, baudRate: 600, parity: 'even', autoOpen: false, lock: false });
    await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
    cleanups.push(() => new Promise<void>((resolve) => port.close(() => resolve())));
    const request = encodeRtuFrame(1, Buffer.from([3, 0, 0, 0, 2]));
    let received = 0;
    port.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received === 9) port.write(request); // from the reply's own callback: no silence at all
    });
    port.write(request);
    await waitFor(() => sim.simulator.line.earlyRequests === 1, { what: 'the early request counted' });
    expect(sim.simulator.counters(1).requests).toBe(1);
  });
});
