// Device channel over MQTT with real mqtt.js clients: auth, uplinks and their answers, kicks.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectAsync } from 'mqtt';
import {
  closeQuietly, connectDevice, flushTo, PROJECT_KEY, startHarness, waitFor, type Device, type Harness,
} from './channel-fixtures.js';

let harness: Harness;
const devices: Device[] = [];

async function device(token: string, options = {}): Promise<Device> {
  const created = await connectDevice(harness.url, token, options);
  devices.push(created);
  return created;
}

function answers(target: Device, topic: string): Record<string, unknown>[] {
  return target.received.filter((msg) => msg.topic === topic).map((msg) => JSON.parse(msg.payload) as Record<string, unknown>);
}

beforeEach(async () => {
  harness = await startHarness();
});

afterEach(async () => {
  await closeQuietly(...devices.splice(0));
  await harness.channel.close();
});

describe('authentication', () => {
  it.each([
    ['wrong project key', 'tok-a', 'nope', 5],
    ['unknown access token', 'tok-x', PROJECT_KEY, 5],
    ['no password', 'tok-a', undefined, 4],
  ])('refuses %s', async (_name, username, password, code) => {
    const attempt = connectAsync(harness.url, { username, password, protocolVersion: 4, reconnectPeriod: 0 });
    await expect(attempt).rejects.toMatchObject({ code });
    expect(harness.events.calls).toEqual([]);
  });

  it('accepts access_token / project_key and reports the device online once', async () => {
    const a = await device('tok-a');
    await waitFor(() => harness.channel.isOnline('dev-A'), 'dev-A online');
    expect(harness.channel.isOnline('dev-B')).toBe(false);
    await a.client.endAsync();
    await waitFor(() => !harness.channel.isOnline('dev-A'), 'dev-A offline');
    expect(harness.events.calls).toEqual([
      { kind: 'connected', deviceId: 'dev-A', via: 'mqtt' },
      { kind: 'disconnected', deviceId: 'dev-A', via: 'mqtt' },
    ]);
  });

  it('refuses MQTT 5 (aedes speaks 3.1/3.1.1 only)', async () => {
    const attempt = connectAsync(harness.url, { username: 'tok-a', password: PROJECT_KEY, protocolVersion: 5, reconnectPeriod: 0 });
    await expect(attempt).rejects.toBeDefined();
  });
});

describe('uplinks', () => {
  it('hands a report to the state and acknowledges it on attributes/response', async () => {
    const a = await device('tok-a');
    await a.client.subscribeAsync('attributes/response', { qos: 1 });
    await a.client.publishAsync('attributes', '{"temperature":22.5,"on":true,"label":"x","nested":{"a":1}}', { qos: 1 });
    await waitFor(() => answers(a, 'attributes/response').length === 1, 'report ack');
    expect(harness.events.of('report')).toEqual([
      { kind: 'report', deviceId: 'dev-A', attributes: { temperature: 22.5, on: true, label: 'x', nested: { a: 1 } } },
    ]);
    expect(answers(a, 'attributes/response')[0]).toEqual({ result: 1, ts: expect.any(Number) });
  });

  it.each([
    ['an array', '[1,2]'],
    ['a null attribute', '{"a":null}'],
  ])('answers result 0 / errcode 400 to a report that is %s and stays connected', async (_name, payload) => {
    const a = await device('tok-a');
    await a.client.subscribeAsync('attributes/response', { qos: 1 });
    await a.client.publishAsync('attributes', payload, { qos: 1 });
    await waitFor(() => answers(a, 'attributes/response').length === 1, 'error ack');
    expect(answers(a, 'attributes/response')[0]).toMatchObject({ result: 0, errcode: 400 });
    expect(harness.events.of('report')).toEqual([]);
    expect(a.client.connected).toBe(true);
  });

  it('answers attributes/get/<id> with the state values, all or by keys', async () => {
    const a = await device('tok-a');
    await a.client.subscribeAsync('attributes/get/response/+', { qos: 1 });
    await a.client.publishAsync('attributes/get/1000', '{}', { qos: 1 });
    await a.client.publishAsync('attributes/get/7', '{"keys":["mode","missing"]}', { qos: 1 });
    await a.client.publishAsync('attributes/get/8', '{"keys":"mode"}', { qos: 1 });
    await waitFor(() => a.received.length === 3, 'three get responses');
    expect(answers(a, 'attributes/get/response/1000')).toEqual([{ result: 1, attributes: { temperature: 21.5, mode: 'auto' } }]);
    expect(answers(a, 'attributes/get/response/7')).toEqual([{ result: 1, attributes: { mode: 'auto' } }]);
    expect(answers(a, 'attributes/get/response/8')[0]).toMatchObject({ result: 0, errcode: 400 });
    expect(harness.events.of('get').map((call) => call.keys)).toEqual([undefined, ['mode', 'missing']]);
  });

  it('hands command replies and events over and acknowledges both', async () => {
    const a = await device('tok-a');
    await a.client.subscribeAsync(['command/reply/response/+', 'event/response/+'], { qos: 1 });
    await a.client.publishAsync('command/reply/42', '{"method":"set","params":{"ok":true},"id":42}', { qos: 1 });
    await a.client.publishAsync('command/reply/43', '{"method":"set","params":{}}', { qos: 1 });
    await a.client.publishAsync('event/report/5', '{"method":"alarm","params":{"level":2}}', { qos: 1 });
    await waitFor(() => a.received.length === 3, 'three acks');
    expect(harness.events.of('reply')).toEqual([
      { kind: 'reply', deviceId: 'dev-A', reply: { method: 'set', params: { ok: true }, id: 42 }, topicId: '42' },
      { kind: 'reply', deviceId: 'dev-A', reply: { method: 'set', params: {}, id: 43 }, topicId: '43' },
    ]);
    expect(harness.events.of('event')).toEqual([
      { kind: 'event', deviceId: 'dev-A', topicId: '5', event: { method: 'alarm', params: { level: 2 } } },
    ]);
    expect(answers(a, 'command/reply/response/42')).toEqual([{ result: 1, ts: expect.any(Number) }]);
    expect(answers(a, 'event/response/5')).toEqual([{ result: 1, ts: expect.any(Number) }]);
  });

  it('passes data/<identifier> through as raw bytes, JSON or not', async () => {
    const a = await device('tok-a');
    const raw = Buffer.from([0x01, 0x03, 0x00, 0xff]);
    await a.client.publishAsync('data/modbus_raw', raw, { qos: 1 });
    await waitFor(() => harness.events.of('stream').length === 1, 'stream data');
    expect(harness.events.of('stream')[0]).toEqual({ kind: 'stream', deviceId: 'dev-A', identifier: 'modbus_raw', data: raw });
  });

  it('drops the connection on a non-JSON payload on a JSON topic', async () => {
    const a = await device('tok-a');
    const closed = new Promise<void>((resolve) => a.client.once('close', () => resolve()));
    a.client.publish('attributes', 'not json', { qos: 1 });
    await closed;
    await waitFor(() => !harness.channel.isOnline('dev-A'), 'dev-A offline');
    expect(harness.events.of('report')).toEqual([]);
  });

  it.each(['attributes/push', 'command/send/1', 'data/x/set', 'foo', 'attributes/get', '$SYS/x', 'data//x'])(
    'silently drops a publish to %s (PUBACK sent, nothing handed over)',
    async (topic) => {
      const a = await device('tok-a');
      await a.client.publishAsync(topic, '{"a":1}', { qos: 1 });
      await flushTo(harness, 'dev-A', a);
      expect(a.client.connected).toBe(true);
      expect(harness.events.calls.filter((call) => call.kind !== 'connected')).toEqual([]);
    },
  );
});

describe('the same identity twice', () => {
  it('kicks the older connection without an offline transition', async () => {
    const first = await device('tok-a', { clientId: 'one' });
    const firstClosed = new Promise<void>((resolve) => first.client.once('close', () => resolve()));
    const second = await device('tok-a', { clientId: 'two' });
    await firstClosed;
    expect(harness.channel.isOnline('dev-A')).toBe(true);
    await second.client.subscribeAsync('attributes/push', { qos: 1 });
    expect(await harness.channel.publish('dev-A', 'attributes/push', Buffer.from('{"x":1}'))).toBe(true);
    await waitFor(() => second.received.length === 1, 'push on the newer connection');
    await second.client.endAsync();
    await waitFor(() => !harness.channel.isOnline('dev-A'), 'dev-A offline');
    expect(harness.events.calls.map((call) => call.kind)).toEqual(['connected', 'disconnected']);
  });

  it('never lets one device kick another by reusing its client id', async () => {
    const b = await device('tok-b', { clientId: 'shared-id' });
    const a = await device('tok-a', { clientId: 'shared-id' });
    await flushTo(harness, 'dev-A', a);
    expect(b.client.connected).toBe(true);
    expect(harness.channel.isOnline('dev-B')).toBe(true);
  });
});
