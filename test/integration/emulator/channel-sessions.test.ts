// Persistent sessions, offline queues, retained messages and UNSUBSCRIBE: the aedes hook traps of
// toolchain.md, each with a regression test against real mqtt.js clients.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connect, type IClientOptions } from 'mqtt';
import {
  closeQuietly, connectDevice, flushTo, PROJECT_KEY, startHarness, waitFor, type Device, type Harness, type Received,
} from './channel-fixtures.js';

let harness: Harness;
const devices: Device[] = [];

interface SessionDevice extends Device {
  sessionPresent: boolean;
}

/** Listens before connecting: a replayed queue can arrive in the same chunk as the CONNACK. */
function connectSession(token: string, options: IClientOptions): Promise<SessionDevice> {
  return new Promise((resolve, reject) => {
    const received: Received[] = [];
    const client = connect(harness.url, {
      username: token, password: PROJECT_KEY, protocolVersion: 4, reconnectPeriod: 0, ...options,
    });
    client.on('message', (topic, payload, packet) => {
      received.push({ topic, payload: payload.toString('utf8'), qos: packet.qos, retain: packet.retain });
    });
    client.once('connect', (connack) => {
      const device = { client, received, sessionPresent: connack.sessionPresent };
      devices.push(device);
      resolve(device);
    });
    client.once('error', reject);
  });
}

async function device(token: string): Promise<Device> {
  const created = await connectDevice(harness.url, token);
  devices.push(created);
  return created;
}

async function disconnect(target: Device, deviceId: string): Promise<void> {
  await target.client.endAsync();
  await waitFor(() => !harness.channel.isOnline(deviceId), `${deviceId} offline`);
}

const topics = (target: Device) => target.received.filter((msg) => msg.topic !== 'flush/marker').map((msg) => `${msg.topic} ${msg.payload}`);

beforeEach(async () => {
  harness = await startHarness();
});

afterEach(async () => {
  await closeQuietly(...devices.splice(0));
  await harness.channel.close();
});

describe('persistent session (clean=false)', () => {
  it('replays the offline queue un-prefixed, once, and the restored subscription is not double-prefixed', async () => {
    const first = await connectSession('tok-a', { clientId: 'a-1', clean: false });
    await first.client.subscribeAsync('command/send/+', { qos: 1 });
    await disconnect(first, 'dev-A');

    expect(await harness.channel.publish('dev-A', 'command/send/1', Buffer.from('queued'))).toBe(false);
    // The session belongs to the device identity, whatever client id the device uses next.
    const second = await connectSession('tok-a', { clientId: 'a-2', clean: false });
    expect(second.sessionPresent).toBe(true);
    await waitFor(() => second.received.length === 1, 'queued message');

    expect(await harness.channel.publish('dev-A', 'command/send/2', Buffer.from('live'))).toBe(true);
    await flushTo(harness, 'dev-A', second);
    expect(topics(second)).toEqual(['command/send/1 queued', 'command/send/2 live']);
  });

  it('a clean session discards what was queued for the persistent one', async () => {
    const first = await connectSession('tok-a', { clientId: 'a-1', clean: false });
    await first.client.subscribeAsync('attributes/push', { qos: 1 });
    await disconnect(first, 'dev-A');
    await harness.channel.publish('dev-A', 'attributes/push', Buffer.from('{"old":1}'));

    const fresh = await connectSession('tok-a', { clientId: 'a-1', clean: true });
    expect(fresh.sessionPresent).toBe(false);
    await flushTo(harness, 'dev-A', fresh);
    expect(topics(fresh)).toEqual([]);
  });

  it('UNSUBSCRIBE also removes the stored subscription of the session', async () => {
    const first = await connectSession('tok-a', { clientId: 'a-1', clean: false });
    await first.client.subscribeAsync(['attributes/push', 'command/send/+'], { qos: 1 });
    await first.client.unsubscribeAsync('attributes/push');
    await disconnect(first, 'dev-A');

    await harness.channel.publish('dev-A', 'attributes/push', Buffer.from('{"gone":1}'));
    await harness.channel.publish('dev-A', 'command/send/3', Buffer.from('kept'));
    const second = await connectSession('tok-a', { clientId: 'a-1', clean: false });
    await flushTo(harness, 'dev-A', second);
    expect(topics(second)).toEqual(['command/send/3 kept']);
  });

  it('a refused filter stored with a persistent SUBSCRIBE never captures another device', async () => {
    const b = await connectSession('tok-b', { clientId: 'b-1', clean: false });
    // mqtt.js rejects a SUBACK holding 128 and carries the packet on the error.
    const refusal: unknown = await b.client
      .subscribeAsync(['attributes/push', '$up/dev-A/#', '$dev/dev-A/#'], { qos: 1 })
      .then(() => undefined, (err: unknown) => err);
    expect(refusal).toMatchObject({ packet: { granted: [1, 128, 128] } });
    await disconnect(b, 'dev-B');

    const a = await device('tok-a');
    await a.client.publishAsync('attributes', '{"a":1}', { qos: 1 });
    await a.client.subscribeAsync('attributes/push', { qos: 1 });
    await harness.channel.publish('dev-A', 'attributes/push', Buffer.from('{"for":"A"}'));
    await flushTo(harness, 'dev-A', a);

    const back = await connectSession('tok-b', { clientId: 'b-1', clean: false });
    expect(back.sessionPresent).toBe(true);
    await flushTo(harness, 'dev-B', back);
    expect(topics(back)).toEqual([]);
  });
});

describe('UNSUBSCRIBE', () => {
  it('stops delivery on a live connection', async () => {
    const a = await device('tok-a');
    await a.client.subscribeAsync('attributes/push', { qos: 1 });
    await harness.channel.publish('dev-A', 'attributes/push', Buffer.from('{"n":1}'));
    await waitFor(() => a.received.length === 1, 'first push');
    await a.client.unsubscribeAsync('attributes/push');
    await harness.channel.publish('dev-A', 'attributes/push', Buffer.from('{"n":2}'));
    await flushTo(harness, 'dev-A', a);
    expect(topics(a)).toEqual(['attributes/push {"n":1}']);
  });

  it('stops delivery for a wildcard filter', async () => {
    const a = await device('tok-a');
    await a.client.subscribeAsync('command/send/+', { qos: 1 });
    await a.client.unsubscribeAsync('command/send/+');
    await harness.channel.publish('dev-A', 'command/send/1', Buffer.from('x'));
    await flushTo(harness, 'dev-A', a);
    expect(topics(a)).toEqual([]);
  });
});

describe('retained messages (the cloud uses none)', () => {
  it('a retained device publish is handled as a report but never stored or replayed', async () => {
    const a = await device('tok-a');
    await a.client.publishAsync('attributes', '{"r":1}', { qos: 1, retain: true });
    await flushTo(harness, 'dev-A', a);
    expect(harness.events.of('report')).toHaveLength(1);

    const b = await device('tok-b');
    await b.client.subscribeAsync(['#', 'attributes'], { qos: 1 });
    await a.client.subscribeAsync(['#', 'attributes'], { qos: 1 });
    await flushTo(harness, 'dev-B', b);
    await flushTo(harness, 'dev-A', a);
    expect(topics(a)).toEqual([]);
    expect(topics(b)).toEqual([]);
  });

  it('a push to a connected but unsubscribed device is not kept for a later subscription', async () => {
    const a = await device('tok-a');
    expect(await harness.channel.publish('dev-A', 'attributes/push', Buffer.from('{"early":1}'))).toBe(true);
    await a.client.subscribeAsync('attributes/push', { qos: 1 });
    await flushTo(harness, 'dev-A', a);
    expect(topics(a)).toEqual([]);
    expect(a.received.every((msg) => !msg.retain)).toBe(true);
  });
});
