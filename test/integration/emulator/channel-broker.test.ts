// The scoped aedes broker seen from the inside (what aedes routes) and from raw MQTT bytes
// (packets pipelined in one TCP chunk with the CONNECT).
import { createServer, connect as tcpConnect, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/ops/log.js';
import { DEFAULT_DEVICE_MAX_PACKET_BYTES } from '../../../packages/emulator/src/channel.js';
import { ScopedBroker } from '../../../packages/emulator/src/channel/broker.js';
import { Presence } from '../../../packages/emulator/src/channel/presence.js';
import { closeQuietly, connectDevice, fakeDirectory, PROJECT_KEY, waitFor, type Device } from './channel-fixtures.js';

let broker: ScopedBroker;
let server: Server;
let url: string;
let port: number;
const devices: Device[] = [];
const sockets: Socket[] = [];

beforeEach(async () => {
  broker = await ScopedBroker.start({
    directory: fakeDirectory(),
    presence: new Presence('mqtt', { onConnected: () => undefined, onDisconnected: () => undefined }),
    onUplink: () => ({ action: 'accept' }),
    maxPacketBytes: DEFAULT_DEVICE_MAX_PACKET_BYTES,
    log: silentLogger(),
  });
  server = createServer((socket) => broker.handleConnection(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  url = `mqtt://127.0.0.1:${port}`;
});

afterEach(async () => {
  await closeQuietly(...devices.splice(0));
  for (const socket of sockets.splice(0)) socket.destroy();
  await broker.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('what aedes routes', () => {
  it('sees a device publish only under its scoped uplink name, never retained', async () => {
    const routed: { topic: string; retain: boolean }[] = [];
    broker.aedes.on('publish', (packet, client) => {
      if (client) routed.push({ topic: packet.topic, retain: packet.retain });
    });
    const a = await connectDevice(url, 'tok-a');
    devices.push(a);
    await a.client.publishAsync('attributes', '{"x":1}', { qos: 1, retain: true });
    await a.client.publishAsync('nowhere/at/all', 'x', { qos: 0 });
    await a.client.publishAsync('data/s', 'x', { qos: 2 });
    await waitFor(() => routed.length === 3, 'three routed publishes');
    expect(routed).toEqual([
      { topic: '$up/dev-A/attributes', retain: false },
      { topic: '$up/dev-A/nowhere/at/all', retain: false },
      { topic: '$up/dev-A/data/s', retain: false },
    ]);
  });
});

// Minimal MQTT 3.1.1 encoder: enough to pipeline packets in one write.
function mqttString(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  return Buffer.concat([Buffer.from([bytes.length >> 8, bytes.length & 0xff]), bytes]);
}

function frame(type: number, body: Buffer): Buffer {
  if (body.length > 127) throw new Error('test frames stay small');
  return Buffer.concat([Buffer.from([type, body.length]), body]);
}

const connectFrame = (token: string) => frame(0x10, Buffer.concat([
  mqttString('MQTT'), Buffer.from([4, 0xc2, 0, 60]), mqttString('raw-client'), mqttString(token), mqttString(PROJECT_KEY),
]));
const subscribeFrame = (id: number, topic: string) => frame(0x82, Buffer.concat([Buffer.from([0, id]), mqttString(topic), Buffer.from([0])]));
const unsubscribeFrame = (id: number, topic: string) => frame(0xa2, Buffer.concat([Buffer.from([0, id]), mqttString(topic)]));

/** Splits the byte stream from the broker into packets: type nibble and, for PUBLISH, the topic. */
function readPackets(socket: Socket): { type: number; topic?: string; messageId?: number }[] {
  const packets: { type: number; topic?: string; messageId?: number }[] = [];
  let buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    while (buffer.length >= 2 && buffer.length >= 2 + buffer[1]) {
      const type = buffer[0] >> 4;
      const body = buffer.subarray(2, 2 + buffer[1]);
      if (type === 3) packets.push({ type, topic: body.subarray(2, 2 + body.readUInt16BE(0)).toString('utf8') });
      else packets.push({ type, messageId: type === 2 ? undefined : body.readUInt16BE(0) });
      buffer = buffer.subarray(2 + buffer[1]);
    }
  });
  return packets;
}

describe('UNSUBSCRIBE pipelined with the CONNECT', () => {
  it('is scoped once the CONNECT is authenticated, so it really unsubscribes', async () => {
    const socket = tcpConnect(port, '127.0.0.1');
    sockets.push(socket);
    const packets = readPackets(socket);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(Buffer.concat([
      connectFrame('tok-a'),
      subscribeFrame(1, 'attributes/push'),
      unsubscribeFrame(2, 'attributes/push'),
      subscribeFrame(3, 'flush/marker'),
    ]));
    await waitFor(() => packets.filter((packet) => packet.type === 9 || packet.type === 11).length === 3, 'acks');
    expect(packets.map((packet) => packet.type)).toEqual([2, 9, 11, 9]);

    await broker.publish('dev-A', 'attributes/push', Buffer.from('{}'));
    await broker.publish('dev-A', 'flush/marker', Buffer.from('m'));
    await waitFor(() => packets.some((packet) => packet.topic === 'flush/marker'), 'marker');
    expect(packets.filter((packet) => packet.type === 3).map((packet) => packet.topic)).toEqual(['flush/marker']);
  });
});
