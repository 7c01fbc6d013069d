// TCP stream access: registration, raw bytes both ways, timeout, replacement.
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PROJECT_KEY, startHarness, waitFor, type Harness } from './channel-fixtures.js';

let harness: Harness | undefined;
const sockets: Socket[] = [];

interface StreamSocket {
  socket: Socket;
  received: () => Buffer;
  closed: () => boolean;
}

async function open(target: Harness): Promise<StreamSocket> {
  const socket = connect(target.channel.tcpPort, '127.0.0.1');
  sockets.push(socket);
  const chunks: Buffer[] = [];
  let closed = false;
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('close', () => { closed = true; });
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  return { socket, received: () => Buffer.concat(chunks), closed: () => closed };
}

const streamed = (target: Harness) => Buffer.concat(target.events.of('stream').map((call) => call.data));

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await harness?.channel.close();
  harness = undefined;
});

describe('tcp stream access', () => {
  it('registers, keeps bytes from the same chunk, and carries raw bytes both ways', async () => {
    harness = await startHarness();
    const h = harness;
    expect(h.channel.sendTcp('dev-A', Buffer.from('x'))).toBe(false);
    const device = await open(h);
    device.socket.write(Buffer.concat([Buffer.from(`${PROJECT_KEY}&tok-a`), Buffer.from([0x01, 0x03, 0x00])]));
    await waitFor(() => streamed(h).length === 3, 'first-chunk bytes');
    expect(h.events.of('stream').every((call) => call.deviceId === 'dev-A' && call.identifier === undefined)).toBe(true);
    expect(h.channel.isOnline('dev-A')).toBe(true);

    device.socket.write(Buffer.from([0xff, 0x00]));
    await waitFor(() => streamed(h).length === 5, 'later bytes');
    expect(streamed(h)).toEqual(Buffer.from([0x01, 0x03, 0x00, 0xff, 0x00]));

    expect(h.channel.sendTcp('dev-A', Buffer.from([0x0d, 0x0a, 0x42]))).toBe(true);
    await waitFor(() => device.received().length === 3, 'downlink bytes');
    expect(device.received()).toEqual(Buffer.from([0x0d, 0x0a, 0x42]));

    device.socket.end();
    await waitFor(() => !h.channel.isOnline('dev-A'), 'offline');
    expect(h.events.calls.filter((call) => call.kind !== 'stream')).toEqual([
      { kind: 'connected', deviceId: 'dev-A', via: 'tcp' },
      { kind: 'disconnected', deviceId: 'dev-A', via: 'tcp' },
    ]);
  });

  it('accepts a trailing \\r\\n, also when it arrives in the next chunk, and a registration split over writes', async () => {
    harness = await startHarness();
    const h = harness;
    const device = await open(h);
    device.socket.write(`${PROJECT_KEY}&to`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    device.socket.write('k-b\r');
    await waitFor(() => h.channel.isOnline('dev-B'), 'registered');
    device.socket.write('\nhello');
    await waitFor(() => streamed(h).toString() === 'hello', 'data after the terminator');
  });

  it('closes a socket that does not register in time', async () => {
    harness = await startHarness(0.3);
    const device = await open(harness);
    await waitFor(() => device.closed(), 'timeout close');
    expect(harness.events.calls).toEqual([]);
  });

  it('closes a socket whose registration line matches no device', async () => {
    harness = await startHarness();
    const device = await open(harness);
    device.socket.write('wrong&tok-a\r\n');
    await waitFor(() => device.closed(), 'refusal close');
    expect(harness.events.calls).toEqual([]);
  });

  it('a second registration of the same identity closes the first, without an offline transition', async () => {
    harness = await startHarness();
    const h = harness;
    const first = await open(h);
    first.socket.write(`${PROJECT_KEY}&tok-a\r\n`);
    await waitFor(() => h.channel.isOnline('dev-A'), 'first registered');
    const second = await open(h);
    second.socket.write(`${PROJECT_KEY}&tok-a\r\n`);
    await waitFor(() => first.closed(), 'first closed');
    expect(h.channel.isOnline('dev-A')).toBe(true);
    expect(h.channel.sendTcp('dev-A', Buffer.from('to-second'))).toBe(true);
    await waitFor(() => second.received().toString() === 'to-second', 'bytes on the newer socket');
    expect(h.events.calls.map((call) => call.kind)).toEqual(['connected']);
  });

  it('keeps TCP and MQTT presence apart', async () => {
    harness = await startHarness();
    const h = harness;
    const device = await open(h);
    device.socket.write(`${PROJECT_KEY}&tok-a`);
    await waitFor(() => h.channel.isOnline('dev-A'), 'registered');
    expect(await h.channel.publish('dev-A', 'attributes/push', Buffer.from('{}'))).toBe(false);
  });
});
