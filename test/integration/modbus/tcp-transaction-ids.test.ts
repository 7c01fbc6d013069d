// Modbus TCP transaction ids over a real loopback socket: the full 16-bit range, so a stale reply
// from 256 requests ago no longer carries a matching id; wrap from 65535 to 0 without confusion.
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import ModbusPkg from 'modbus-serial';
import { createModbusTransport } from '../../../src/field/modbus/transport.js';
import { ModbusTcpPort } from '../../../src/field/modbus/modbus-tcp-port.js';
import { tcpBusConfig } from '../../helpers/bus-configs.js';

const BAD = 0xbad0;
const value = (address: number) => (address * 7) & 0xffff;

interface Peer {
  port: number;
  ids: number[];
  /** Before request number n (from 0) is answered, send this stale frame first (or nothing). */
  staleBefore?: (requestIndex: number, id: number) => number | undefined;
  discards: string[];
  stop(): Promise<void>;
}

function reply(id: number, unit: number, start: number, count: number, read: (a: number) => number): Buffer {
  const frame = Buffer.alloc(9 + 2 * count);
  frame.writeUInt16BE(id, 0);
  frame.writeUInt16BE(0, 2);
  frame.writeUInt16BE(3 + 2 * count, 4);
  frame[6] = unit;
  frame[7] = 3;
  frame[8] = 2 * count;
  for (let i = 0; i < count; i += 1) frame.writeUInt16BE(read(start + i), 9 + 2 * i);
  return frame;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startPeer(): Promise<Peer> {
  const sockets = new Set<Socket>();
  const peer: Peer = { port: 0, ids: [], discards: [], stop: async () => undefined };
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 12) {
        const id = pending.readUInt16BE(0);
        const unit = pending[6] as number;
        const start = pending.readUInt16BE(8);
        const count = pending.readUInt16BE(10);
        pending = pending.subarray(12);
        const index = peer.ids.length;
        peer.ids.push(id);
        const staleId = peer.staleBefore?.(index, id);
        const frames = staleId === undefined ? [] : [reply(staleId, unit, start, count, () => BAD)];
        frames.push(reply(id, unit, start, count, value));
        socket.write(Buffer.concat(frames));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  peer.port = typeof address === 'object' && address ? address.port : 0;
  peer.stop = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  cleanups.push(() => peer.stop());
  return peer;
}

describe('Modbus TCP transaction ids', () => {
  it('uses 16-bit ids: 300 requests carry 300 distinct ids, and a reply from 256 requests ago is discarded', async () => {
    const peer = await startPeer();
    // From request 256 on, each answer is preceded by a stale frame carrying the id of 256 requests ago.
    peer.staleBefore = (index) => (index >= 256 ? peer.ids[index - 256] : undefined);
    const transport = createModbusTransport(tcpBusConfig({ port: peer.port, timeoutMs: 2000 }));
    transport.onDiscard((reason) => peer.discards.push(reason));
    await transport.open();
    cleanups.push(() => transport.close());
    for (let i = 0; i < 300; i += 1) {
      const start = i % 100;
      expect(Array.from(await transport.readHoldingRegisters(1, start, 2, 2000))).toEqual([value(start), value(start + 1)]);
    }
    expect(new Set(peer.ids).size).toBe(300);
    expect(Math.max(...peer.ids)).toBeGreaterThan(255);
    expect(peer.discards).toHaveLength(44);
    expect(peer.discards[0]).toMatch(/transaction id \d+ not awaited/);
  });

  it('wraps from 65535 to 0 and still matches each reply to its own request', async () => {
    const peer = await startPeer();
    const discards: string[] = [];
    const port = new ModbusTcpPort('127.0.0.1', peer.port, {
      onDiscard: (reason) => discards.push(reason), onDesync: (reason) => discards.push(`desync ${reason}`),
    }, 65534);
    const client = new ModbusPkg.default(port);
    await new Promise<void>((resolve, reject) => client.open((err: unknown) => (err ? reject(err as Error) : resolve())));
    cleanups.push(() => new Promise<void>((resolve) => client.destroy(() => resolve())));
    client.setID(1);
    client.setTimeout(2000);
    for (let i = 0; i < 4; i += 1) {
      port.expect({ unit: 1, functionCode: 3, quantity: 1, address: i });
      const result = await client.readHoldingRegisters(i, 1);
      expect(result.data).toEqual([value(i)]);
    }
    expect(peer.ids).toEqual([65534, 65535, 0, 1]);
    expect(discards).toEqual([]);
  });

  it('sends nothing for a write not announced by expect(), so no reply can match it', async () => {
    const peer = await startPeer();
    const port = new ModbusTcpPort('127.0.0.1', peer.port, { onDiscard: () => undefined, onDesync: () => undefined });
    await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
    cleanups.push(() => new Promise<void>((resolve) => port.destroy(() => resolve())));
    port.write(Buffer.from([1, 3, 0, 0, 0, 1, 0x84, 0x0a]));
    port.expect({ unit: 1, functionCode: 3, quantity: 1, address: 0 });
    port.write(Buffer.from([1, 3, 0, 0, 0, 1, 0x84, 0x0a]));
    const deadline = Date.now() + 10_000;
    while (peer.ids.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(peer.ids).toEqual([1]);
  });
});
