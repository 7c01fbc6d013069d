// A Modbus TCP device that always answers with transaction id 0 (issue 41): its replies are
// discarded (never a value) and the read times out; why is named at warn, once per spell, not only
// at debug. A raw TCP peer on 127.0.0.1.
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Bus } from '../../../src/field/modbus/bus.js';
import { ModbusTimeoutError } from '../../../src/field/modbus/errors.js';
import { createModbusTransport } from '../../../src/field/modbus/transport.js';
import { tcpBusConfig } from '../../helpers/bus-configs.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { waitFor } from '../../helpers/wait.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Answers every FC3 read with its registers; with transaction id 0 while `foreign()` says so. */
async function startPeer(foreign: () => boolean): Promise<number> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 12) {
        const id = foreign() ? 0 : pending.readUInt16BE(0);
        const unit = pending[6] as number;
        const count = pending.readUInt16BE(10);
        pending = pending.subarray(12);
        const frame = Buffer.alloc(9 + 2 * count);
        frame.writeUInt16BE(id, 0);
        frame.writeUInt16BE(3 + 2 * count, 4);
        frame[6] = unit;
        frame[7] = 3;
        frame[8] = 2 * count;
        socket.write(frame);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => {
    for (const socket of sockets) socket.destroy();
    server.close(() => resolve());
  }));
  return (server.address() as AddressInfo).port;
}

describe('Modbus TCP replies with a transaction id that was not awaited', () => {
  it('are discarded, named at warn once per spell, and the end of the spell at info', async () => {
    let foreign = true;
    const port = await startPeer(() => foreign);
    const log = captureLogger();
    const bus = new Bus({
      config: tcpBusConfig({ port, timeoutMs: 150, cooldown: { afterTimeouts: 100, initialMs: 1000, maxMs: 1000 } }),
      transportFactory: createModbusTransport, logger: log.logger,
    });
    cleanups.push(() => bus.stop());
    bus.start();
    await waitFor(() => bus.stats().state === 'up', { what: 'bus up' });
    for (let i = 0; i < 4; i += 1) await expect(bus.read(1, 'holding', 0, 2)).rejects.toBeInstanceOf(ModbusTimeoutError);
    const warned = () => log.lines().filter((l) => l.msg === 'bus replies discarded: transaction id not awaited');
    expect(warned()).toHaveLength(1);
    expect(warned()[0]).toMatchObject({ level: 40, reason: expect.stringContaining('transaction id 0 not awaited') });
    expect(bus.stats().discardedReplies).toBeGreaterThanOrEqual(4);
    foreign = false;
    for (let i = 0; i < 10; i += 1) expect(await bus.read(1, 'holding', 0, 2)).toMatchObject({ start: 0 });
    expect(log.lines().filter((l) => l.msg === 'bus transaction ids match again')).toHaveLength(1);
    foreign = true;
    await expect(bus.read(1, 'holding', 0, 2)).rejects.toBeInstanceOf(ModbusTimeoutError);
    expect(warned()).toHaveLength(2); // a new spell
  }, 30_000);
});
