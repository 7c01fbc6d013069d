// Modbus RTU through a socat pty pair with the real serialport binding, pymodbus as the slave.
import { afterEach, describe, expect, it } from 'vitest';
import { Bus } from '../../../src/field/modbus/bus.js';
import {
  ModbusCrcError, ModbusExceptionError, ModbusTimeoutError, UnitCoolingDownError, UnitLateReplyPendingError,
} from '../../../src/field/modbus/errors.js';
import { createModbusTransport } from '../../../src/field/modbus/transport.js';
import { silentLogger } from '../../../src/ops/log.js';
import { rtuBusConfig } from '../../helpers/bus-configs.js';
import { startPymodbus, type SlaveOptions } from '../../helpers/pymodbus.js';
import { ptyLinks, startPtyPair } from '../../helpers/socat.js';
import { waitFor } from '../../helpers/wait.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function line(options: SlaveOptions, links = ptyLinks()) {
  const pair = await startPtyPair(links);
  cleanups.push(() => pair.stop());
  const slave = await startPymodbus({ serial: pair.b }, options);
  cleanups.push(() => slave.stop());
  return { pair, slave };
}

async function openBus(path: string, overrides: Parameters<typeof rtuBusConfig>[0] = {}) {
  const bus = new Bus({
    config: rtuBusConfig({ path, timeoutMs: 1000, interFrameDelayMs: 2, ...overrides }),
    transportFactory: createModbusTransport,
    logger: silentLogger(),
  });
  cleanups.push(() => bus.stop());
  bus.start();
  await waitFor(() => bus.stats().state === 'up', { what: 'bus up' });
  return bus;
}

describe('Modbus RTU over a pty pair against pymodbus', () => {
  it('takes turns between two units on one line, reading and writing', async () => {
    const { pair } = await line({ units: [1, 2] });
    const bus = await openBus(pair.a);
    const reads = [];
    for (let i = 0; i < 10; i += 1) {
      reads.push(bus.read(1, 'holding', i, 2), bus.read(2, 'input', i, 2), bus.read(1 + (i % 2), 'coil', i, 3));
    }
    const blocks = await Promise.all(reads);
    expect(blocks[0]?.words).toEqual(Uint16Array.from([1000, 1001]));
    expect(blocks[1]?.words).toEqual(Uint16Array.from([2500, 2501]));
    expect(blocks[28]?.words).toEqual(Uint16Array.from([2509, 2510]));
    expect(blocks[29]?.bits).toEqual([true, false, true]);
    await bus.writeRegisters(2, 3, [4242, 17]);
    expect((await bus.read(2, 'holding', 3, 2)).words).toEqual(Uint16Array.from([4242, 17]));
    expect(bus.stats()).toMatchObject({ timeouts: 0, frameErrors: 0, inFlight: 0 });
  });

  it('surfaces an exception typed, times out an absent unit into cool-down, keeps the present one', async () => {
    const { pair } = await line({ units: [1] });
    const bus = await openBus(pair.a, { cooldown: { afterTimeouts: 2, initialMs: 10_000, maxMs: 10_000 }, lateReplyGuardMs: 1500 });
    const err = await bus.read(1, 'input', 199, 2).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 2, exceptionName: 'Illegal data address' });
    expect(err).toBeInstanceOf(ModbusExceptionError);

    await expect(bus.read(5, 'holding', 0, 1)).rejects.toBeInstanceOf(ModbusTimeoutError);
    // Its reply may still come: the unit is left alone until the late-reply guard has passed.
    await expect(bus.read(5, 'holding', 0, 1)).rejects.toBeInstanceOf(UnitLateReplyPendingError);
    expect((await bus.read(1, 'holding', 7, 1)).words).toEqual(Uint16Array.from([1007]));
    await waitFor(() => bus.lateUnits().length === 0, { what: 'late-reply guard over' });
    await expect(bus.read(5, 'holding', 0, 1)).rejects.toBeInstanceOf(ModbusTimeoutError);
    for (let round = 0; round < 5; round += 1) {
      await expect(bus.read(5, 'holding', 0, 1)).rejects.toBeInstanceOf(UnitCoolingDownError);
      expect((await bus.read(1, 'holding', 7, 1)).words).toEqual(Uint16Array.from([1007]));
    }
    expect(bus.unitState(5).state).toBe('cooling-down');
    // Its first read was repeated once (a frame may have been lost), the second not (it had timed out before).
    expect(bus.stats()).toMatchObject({ timeouts: 3, timeoutRepeats: 1 });
  });

  it('reports a bad-CRC frame as ModbusCrcError and keeps serving the line', async () => {
    const { pair } = await line({ units: [1, 3], garbleUnit: 3 });
    const bus = await openBus(pair.a);
    await expect(bus.read(3, 'holding', 0, 4)).rejects.toBeInstanceOf(ModbusCrcError);
    expect((await bus.read(1, 'holding', 0, 4)).words).toEqual(Uint16Array.from([1000, 1001, 1002, 1003]));
    await expect(bus.read(3, 'coil', 0, 8)).rejects.toBeInstanceOf(ModbusCrcError);
    expect((await bus.read(1, 'holding', 4, 1)).words).toEqual(Uint16Array.from([1004]));
    expect(bus.stats()).toMatchObject({ frameErrors: 2, state: 'up' });
  });

  it('resumes by itself when the pty pair vanishes and comes back under the same path', async () => {
    const links = ptyLinks();
    const first = await line({ units: [1] }, links);
    const bus = await openBus(links.a, { reconnect: { initialMs: 100, maxMs: 500, jitter: 0.2 } });
    expect((await bus.read(1, 'holding', 0, 1)).words?.[0]).toBe(1000);

    await first.slave.stop();
    await first.pair.stop();
    await waitFor(async () => {
      // A vanished pty may show up only when the next request fails; keep polling like a poller.
      await bus.read(1, 'holding', 0, 1).catch(() => undefined);
      return bus.stats().state === 'down';
    }, { what: 'bus down' });

    await line({ units: [1] }, links);
    const value = await waitFor(async () => {
      if (bus.stats().state !== 'up') return undefined;
      const block = await bus.read(1, 'holding', 2, 1).catch(() => undefined);
      return block?.words?.[0];
    }, { what: 'reads after the pty came back', timeoutMs: 20_000 });
    expect(value).toBe(1002);
    expect(bus.stats().reconnects).toBeGreaterThanOrEqual(1);
  });
});
