// A device can never see or publish into another device's topics, however it names them.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeQuietly, connectDevice, flushTo, startHarness, type Device, type Harness } from './channel-fixtures.js';

let harness: Harness;
const devices: Device[] = [];

async function device(token: string): Promise<Device> {
  const created = await connectDevice(harness.url, token);
  devices.push(created);
  return created;
}

const notMarker = (device: Device) => device.received.filter((msg) => msg.topic !== 'flush/marker');

beforeEach(async () => {
  harness = await startHarness();
});

afterEach(async () => {
  await closeQuietly(...devices.splice(0));
  await harness.channel.close();
});

describe('device isolation', () => {
  it('device A subscribed to everything it may name hears nothing meant for or sent by B', async () => {
    const a = await device('tok-a');
    const b = await device('tok-b');
    const filters = ['#', '+/#', '+/+', 'dev-B/#', 'dev/dev-B/#', '$dev/dev-A/dev-B/#', 'attributes/push', 'attributes'];
    const granted = await a.client.subscribeAsync(filters, { qos: 1 });
    expect(granted.map((grant) => grant.qos)).toEqual(filters.map(() => 1));
    await b.client.subscribeAsync('attributes/push', { qos: 1 });

    await b.client.publishAsync('attributes', '{"secret":1}', { qos: 1 });
    await b.client.publishAsync('data/stream', 'raw', { qos: 1 });
    await harness.channel.publish('dev-B', 'attributes/push', Buffer.from('{"for":"B"}'));
    await flushTo(harness, 'dev-B', b);
    await flushTo(harness, 'dev-A', a);

    expect(notMarker(b)).toEqual([{ topic: 'attributes/push', payload: '{"for":"B"}', qos: 1, retain: false }]);
    // A's own broad subscriptions hear only its own downlink (the marker), never B and never
    // its own or B's uplinks.
    expect(notMarker(a)).toEqual([]);
  });

  it.each(['$SYS/#', '$dev/dev-B/#', '$up/dev-B/#', '$dev/#', '$up/#', '$share/g/attributes/push'])(
    'refuses the subscription %s with SUBACK 128',
    async (filter) => {
      const a = await device('tok-a');
      // mqtt.js rejects a SUBACK with 128 and carries the packet on the error.
      const refusal: unknown = await a.client.subscribeAsync(filter, { qos: 1 }).then(() => undefined, (err: unknown) => err);
      expect(refusal).toMatchObject({ packet: { cmd: 'suback', granted: [128] } });
      expect(a.client.connected).toBe(true);
    },
  );

  it.each(['dev-B/attributes/push', 'dev/dev-B/attributes/push', '$dev/dev-B/attributes/push', 'attributes/push'])(
    'device A publishing to %s never reaches B',
    async (topic) => {
      const a = await device('tok-a');
      const b = await device('tok-b');
      await b.client.subscribeAsync('#', { qos: 1 });
      await a.client.publishAsync(topic, '{"forged":true}', { qos: 1 });
      await flushTo(harness, 'dev-B', b);
      expect(notMarker(b)).toEqual([]);
      expect(harness.events.of('report')).toEqual([]);
    },
  );

  it('reports are attributed to the device that authenticated, not to topic content', async () => {
    const a = await device('tok-a');
    await a.client.publishAsync('attributes', '{"v":1}', { qos: 1 });
    await flushTo(harness, 'dev-A', a);
    expect(harness.events.of('report').map((call) => call.deviceId)).toEqual(['dev-A']);
  });

  it('keeps a device id with /, + and # in one scoped level', async () => {
    const c = await device('tok-c');
    const a = await device('tok-a');
    await a.client.subscribeAsync('#', { qos: 1 });
    await c.client.subscribeAsync('attributes/push', { qos: 1 });
    expect(await harness.channel.publish('dev/C+#', 'attributes/push', Buffer.from('{"c":1}'))).toBe(true);
    await flushTo(harness, 'dev/C+#', c);
    await flushTo(harness, 'dev-A', a);
    expect(notMarker(c).map((msg) => msg.topic)).toEqual(['attributes/push']);
    expect(notMarker(a)).toEqual([]);
  });
});

describe('cloud to device', () => {
  it('publish resolves true for a connected device and false for one that is not', async () => {
    const a = await device('tok-a');
    await a.client.subscribeAsync('command/send/+', { qos: 1 });
    expect(await harness.channel.publish('dev-A', 'command/send/9', Buffer.from('{"method":"m","params":{},"id":9}'))).toBe(true);
    expect(await harness.channel.publish('dev-B', 'command/send/9', Buffer.from('{}'))).toBe(false);
    await flushTo(harness, 'dev-A', a);
    expect(notMarker(a)).toEqual([{ topic: 'command/send/9', payload: '{"method":"m","params":{},"id":9}', qos: 1, retain: false }]);
  });

  it('delivers at the QoS the device subscribed with (QoS 0 stays 0)', async () => {
    const a = await device('tok-a');
    await a.client.subscribeAsync('attributes/push', { qos: 0 });
    await harness.channel.publish('dev-A', 'attributes/push', Buffer.from('{}'));
    await flushTo(harness, 'dev-A', a);
    expect(notMarker(a).map((msg) => msg.qos)).toEqual([0]);
  });

  it('delivers at QoS 1 to a QoS 2 subscription (the cloud publishes at QoS 1)', async () => {
    const a = await device('tok-a');
    await a.client.subscribeAsync('attributes/push', { qos: 2 });
    await harness.channel.publish('dev-A', 'attributes/push', Buffer.from('{}'));
    await flushTo(harness, 'dev-A', a);
    expect(notMarker(a).map((msg) => msg.qos)).toEqual([1]);
  });

  it.each(['', '#', 'a/+/b', '$SYS/x'])('rejects an invalid device topic %j', async (topic) => {
    await expect(harness.channel.publish('dev-A', topic, Buffer.from('x'))).rejects.toThrow(/invalid device topic/);
  });
});
