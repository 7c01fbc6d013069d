// The Bus and the modbus-serial transport against pymodbus over loopback TCP.
import { afterEach, describe, expect, it } from 'vitest';
import type { BusConfig } from '../../../src/core/config/site-types.js';
import { Bus } from '../../../src/field/modbus/bus.js';
import {
  BusDownError, ModbusCrcError, ModbusExceptionError, ModbusTimeoutError, PortClosedError, UnitCoolingDownError,
} from '../../../src/field/modbus/errors.js';
import { createModbusTransport } from '../../../src/field/modbus/transport.js';
import { silentLogger } from '../../../src/ops/log.js';
import { tcpBusConfig } from '../../helpers/bus-configs.js';
import { startPymodbus, type PymodbusSlave } from '../../helpers/pymodbus.js';
import { waitFor } from '../../helpers/wait.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function slave(...args: Parameters<typeof startPymodbus>): Promise<PymodbusSlave> {
  const started = await startPymodbus(...args);
  cleanups.push(() => started.stop());
  return started;
}

async function openBus(config: BusConfig): Promise<Bus> {
  const bus = new Bus({ config, transportFactory: createModbusTransport, logger: silentLogger() });
  cleanups.push(() => bus.stop());
  bus.start();
  await waitFor(() => bus.stats().state === 'up', { what: 'bus up' });
  return bus;
}

const fastCooldown = { afterTimeouts: 1, initialMs: 1500, maxMs: 3000 };

describe('Modbus TCP against pymodbus', () => {
  it('reads all four tables and writes registers and coils', async () => {
    const peer = await slave({ tcp: 0 }, { units: [1, 2] });
    const bus = await openBus(tcpBusConfig({ port: peer.port, timeoutMs: 2000 }));

    expect((await bus.read(1, 'holding', 10, 3)).words).toEqual(Uint16Array.from([1010, 1011, 1012]));
    expect((await bus.read(2, 'input', 0, 2)).words).toEqual(Uint16Array.from([2500, 2501]));
    expect((await bus.read(1, 'coil', 0, 5)).bits).toEqual([false, true, false, true, false]);
    expect((await bus.read(1, 'discrete', 0, 4)).bits).toEqual([true, false, false, true]);
    const full = await bus.read(1, 'holding', 0, 125);
    expect(full.words?.length).toBe(125);
    expect(full.words?.[124]).toBe(1124);

    await bus.writeRegisters(1, 20, [65535]);
    await bus.writeRegisters(1, 21, [7, 8], { priority: 'normal' });
    expect((await bus.read(1, 'holding', 20, 3)).words).toEqual(Uint16Array.from([65535, 7, 8]));
    await bus.writeCoils(1, 0, [true]);
    await bus.writeCoils(1, 2, [true, true], { forceMulti: true });
    expect((await bus.read(1, 'coil', 0, 4)).bits).toEqual([true, true, true, true]);
  });

  it('surfaces an illegal address as a typed exception, and keeps several transactions in flight', async () => {
    const peer = await slave({ tcp: 0 });
    const bus = await openBus(tcpBusConfig({ port: peer.port, timeoutMs: 2000, maxInFlight: 4 }));
    const err = await bus.read(1, 'holding', 190, 20).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModbusExceptionError);
    expect(err).toMatchObject({ code: 2, exceptionName: 'Illegal data address' });
    const reads = await Promise.all(Array.from({ length: 20 }, (_, i) => bus.read(1, 'holding', i, 1)));
    expect(reads.map((r) => r.words?.[0])).toEqual(Array.from({ length: 20 }, (_, i) => 1000 + i));
  });

  it('retries "slave device busy" and succeeds', async () => {
    const peer = await slave({ tcp: 0 }, { busyUnit: 1, busyCount: 2 });
    const bus = await openBus(tcpBusConfig({ port: peer.port, timeoutMs: 2000, busyRetries: 3 }));
    expect((await bus.read(1, 'holding', 0, 1)).words).toEqual(Uint16Array.from([1000]));
    expect(bus.stats().busyRetries).toBe(2);
  });

  it('an absent unit times out, then cools down while the present unit keeps answering', async () => {
    const peer = await slave({ tcp: 0 }, { units: [1] });
    const bus = await openBus(tcpBusConfig({ port: peer.port, timeoutMs: 800, cooldown: { afterTimeouts: 1, initialMs: 10_000, maxMs: 10_000 } }));
    await expect(bus.read(9, 'holding', 0, 1)).rejects.toBeInstanceOf(ModbusTimeoutError);
    for (let round = 0; round < 5; round += 1) {
      await expect(bus.read(9, 'holding', 0, 1)).rejects.toBeInstanceOf(UnitCoolingDownError);
      expect((await bus.read(1, 'holding', 0, 1)).words).toEqual(Uint16Array.from([1000]));
    }
    expect(bus.stats().timeouts).toBe(1);
  });

  it('reconnects by itself when the peer is killed and restarted', async () => {
    const first = await startPymodbus({ tcp: 0 });
    const port = first.port;
    const bus = await openBus(tcpBusConfig({ port, timeoutMs: 1000, reconnect: { initialMs: 100, maxMs: 400, jitter: 0.2 } }));
    expect((await bus.read(1, 'holding', 0, 1)).words?.[0]).toBe(1000);

    await first.stop();
    await waitFor(() => bus.stats().state === 'down', { what: 'bus down' });
    const refused = await bus.read(1, 'holding', 0, 1).catch((e: unknown) => e);
    expect(refused instanceof BusDownError || refused instanceof PortClosedError).toBe(true);

    await slave({ tcp: port });
    await waitFor(() => bus.stats().state === 'up', { what: 'bus up again' });
    expect((await bus.read(1, 'holding', 1, 1)).words?.[0]).toBe(1001);
    expect(bus.stats().reconnects).toBe(1);
  });
});

describe('RTU over TCP against pymodbus (RTU framer on a TCP socket)', () => {
  it('reads, and reports a bad-CRC reply as ModbusCrcError without disturbing the next request', async () => {
    const peer = await slave({ rtuTcp: 0 }, { units: [1, 2], garbleUnit: 2 });
    const config: BusConfig = {
      kind: 'rtu-over-tcp', name: 'gw', host: '127.0.0.1', port: peer.port, timeoutMs: 1000, interFrameDelayMs: 2,
      reconnect: { initialMs: 100, maxMs: 1000, jitter: 0 }, cooldown: fastCooldown, busyRetries: 1,
    };
    const bus = await openBus(config);
    expect((await bus.read(1, 'holding', 5, 2)).words).toEqual(Uint16Array.from([1005, 1006]));
    await expect(bus.read(2, 'holding', 0, 2)).rejects.toBeInstanceOf(ModbusCrcError);
    expect((await bus.read(1, 'input', 0, 1)).words).toEqual(Uint16Array.from([1500]));
    expect(bus.stats()).toMatchObject({ frameErrors: 1, state: 'up' });
  });
});
