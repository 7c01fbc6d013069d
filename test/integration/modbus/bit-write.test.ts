// Bit writes against pymodbus: many concurrent writes to different bits of one holding register
// (through the command service, as cloud pushes do) must all land. A read-modify-write split
// over two bus jobs lets the reads of all of them run before any write: all but one bit lost.
import { afterEach, describe, expect, it } from 'vitest';
import { CommandService } from '../../../src/device/commands.js';
import { BusDeviceIo } from '../../../src/device/device-io.js';
import { silentLogger } from '../../../src/ops/log.js';
import { Bus } from '../../../src/field/modbus/bus.js';
import { systemTimers } from '../../../src/core/time.js';
import { createModbusTransport } from '../../../src/field/modbus/transport.js';
import { tcpBusConfig } from '../../helpers/bus-configs.js';
import { deviceConfig, pointConfig } from '../../helpers/device-configs.js';
import { startPymodbus } from '../../helpers/pymodbus.js';
import { waitFor } from '../../helpers/wait.js';
import { compileDevice } from '../../../src/core/config/compile.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const REGISTER = 30;
const bits = Array.from({ length: 16 }, (_, bit) => pointConfig({ id: `flag${bit}`, address: REGISTER, type: 'bit', bit, writable: true }));

async function setup(forceMultiWrite: boolean) {
  const peer = await startPymodbus({ tcp: 0 });
  cleanups.push(() => peer.stop());
  const bus = new Bus({ config: tcpBusConfig({ port: peer.port, timeoutMs: 2000 }), transportFactory: createModbusTransport, logger: silentLogger() });
  cleanups.push(() => bus.stop());
  bus.start();
  await waitFor(() => bus.stats().state === 'up', { what: 'bus up' });
  const device = deviceConfig({ name: 'flags', points: bits });
  const limits = { ...device.limits, forceMultiWrite };
  const svc = new CommandService(compileDevice({ ...device, limits }), [], new BusDeviceIo(bus, { ...device, limits }, systemTimers), silentLogger());
  return { bus, svc, unit: device.unitId };
}

describe('bit writes of one holding register', () => {
  it.each([false, true])('16 concurrent writes to different bits all land (forceMulti %s)', async (forceMulti) => {
    const { bus, svc, unit } = await setup(forceMulti);
    await bus.writeRegisters(unit, REGISTER, [0]);
    // Each push is its own message, handled concurrently as the device session does.
    const results = await Promise.all(bits.map((b) => svc.applyAttributes({ [b.id]: true }, 'push')));
    expect(results.every((r) => Object.keys(r.failed).length === 0 && Object.keys(r.rejected).length === 0)).toBe(true);
    expect((await bus.read(unit, 'holding', REGISTER, 1)).words?.[0]).toBe(0xffff);

    // Clearing the even bits concurrently, while a poll-priority read runs too, keeps the odd ones.
    const even = bits.filter((b) => b.bit % 2 === 0);
    await Promise.all([
      ...even.map((b) => svc.applyAttributes({ [b.id]: false }, 'push')),
      bus.read(unit, 'holding', 0, 40),
    ]);
    expect((await bus.read(unit, 'holding', REGISTER, 1)).words?.[0]).toBe(0xaaaa);
  });
});
