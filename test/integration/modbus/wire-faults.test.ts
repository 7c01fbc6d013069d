// Line faults of real RS-485 installations, played by the simulator over a socat pty: an adapter
// that echoes every request (with and without `echo: true` on the bus), and a device whose reads
// carry one register too many (or too few) with a consistent byte count and CRC.
import { afterEach, describe, expect, it } from 'vitest';
import type { RtuBusConfig } from '../../../src/core/config/site-types.js';
import { Bus } from '../../../src/field/modbus/bus.js';
import { LineEchoError, ModbusCrcError, ModbusLengthError } from '../../../src/field/modbus/errors.js';
import { createModbusTransport } from '../../../src/field/modbus/transport.js';
import { createPtyPair, startSimulation } from '../../../packages/simulator/src/index.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { rtuBusConfig } from '../../helpers/bus-configs.js';
import { waitFor } from '../../helpers/wait.js';
import { logger as silent, mapFrom } from '../simulator/sim-helpers.js';

const MAP = `
units:
  1:
    holding: { 0: 100, 1: 101, 2: 102, 3: 103 }
  2:
    holding: { 0: 200, 1: 201, 2: 202, 3: 203 }
    faults: { extraRegisters: 1 }
  3:
    holding: { 0: 300, 1: 301, 2: 302, 3: 303 }
    faults: { extraRegisters: -1 }
`;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function line(options: { echo: boolean }, bus: Partial<RtuBusConfig>) {
  const pty = await createPtyPair();
  cleanups.push(() => pty.close());
  const sim = await startSimulation({ map: mapFrom(MAP), logger: silent, rtu: { path: pty.b }, line: { baud: 19200, parity: 'even', dataBits: 8, stopBits: 1 }, echo: options.echo });
  cleanups.push(() => sim.close());
  const capture = captureLogger();
  const config = rtuBusConfig({ path: pty.a, timeoutMs: 500, interFrameDelayMs: 3, cooldown: { afterTimeouts: 100, initialMs: 100, maxMs: 100 }, ...bus });
  const instance = new Bus({ config, transportFactory: createModbusTransport, logger: capture.logger });
  cleanups.push(() => instance.stop());
  instance.start();
  await waitFor(() => instance.stats().state === 'up', { what: 'bus up' });
  return { bus: instance, sim, capture };
}

describe('RS-485 local echo', () => {
  it('echo: false on an echoing line: every read fails as "the line echoes requests", logged once, in the stats; no value decoded', async () => {
    const { bus, capture } = await line({ echo: true }, { echo: false });
    for (let i = 0; i < 4; i += 1) {
      const err = await bus.read(1, 'holding', 0, 4).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(LineEchoError);
      expect((err as Error).message).toContain('the line echoes requests: set echo: true on this bus');
    }
    expect(bus.stats().echoProblem).toBe('the line echoes requests: set echo: true on this bus');
    expect(capture.lines().filter((l) => l.msg === 'bus echo setting does not match the line')).toHaveLength(1);
    expect(bus.stats().frameErrors).toBe(4);
  });

  it('echo: true on an echoing line: reads and writes (FC6, FC16) work, the echo stripped and checked', async () => {
    const { bus, sim } = await line({ echo: true }, { echo: true });
    expect(Array.from((await bus.read(1, 'holding', 0, 4)).words ?? [])).toEqual([100, 101, 102, 103]);
    await bus.writeRegisters(1, 1, [7]);
    await bus.writeRegisters(1, 2, [8, 9]);
    expect(Array.from((await bus.read(1, 'holding', 0, 4)).words ?? [])).toEqual([100, 7, 8, 9]);
    expect(sim.simulator.counters(1)?.replies).toBe(4);
    expect(bus.stats()).toMatchObject({ frameErrors: 0, discardedReplies: 0 });
    expect(bus.stats().echoProblem).toBeUndefined();
  });

  it('echo: true on a line that does not echo: fails naming the setting, never decodes', async () => {
    const { bus } = await line({ echo: false }, { echo: true });
    const err = await bus.read(1, 'holding', 0, 4).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(LineEchoError);
    expect((err as Error).message).toContain('set echo: false');
  });
});

describe('replies of another length than asked', () => {
  it('one register too many (byte count and CRC consistent) is a length mismatch, not a CRC error', async () => {
    const { bus } = await line({ echo: false }, {});
    const err = await bus.read(2, 'holding', 0, 2).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ModbusLengthError);
    expect(err).not.toBeInstanceOf(ModbusCrcError);
    expect((err as Error).message).toContain('reply length mismatch: 3 registers (byte count 6, CRC good) to a read of 2 registers');
    // The healthy unit on the same line is unaffected, before and after.
    expect(Array.from((await bus.read(1, 'holding', 0, 2)).words ?? [])).toEqual([100, 101]);
  });

  it('one register too few is a length mismatch too', async () => {
    const { bus } = await line({ echo: false }, {});
    const err = await bus.read(3, 'holding', 0, 3).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ModbusLengthError);
    expect((err as Error).message).toContain('2 registers (byte count 4, CRC good) to a read of 3 registers');
  });

  it('an echoing line with an off-by-one device and echo: true: still a length mismatch', async () => {
    const { bus } = await line({ echo: true }, { echo: true });
    const err = await bus.read(2, 'holding', 0, 2).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ModbusLengthError);
  });
});
