import mqtt, { type MqttClient } from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { MqttLink, LinkDownError, type MqttLinkOptions, type LinkEvent } from '../../../src/cloud/mqtt/link.js';
import { silentLogger } from '../../../src/ops/log.js';
import { captureLog } from '../../helpers/capture-log.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { Mosquitto } from '../../helpers/mosquitto.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function broker(options?: Parameters<typeof Mosquitto.start>[0]): Promise<Mosquitto> {
  const started = await Mosquitto.start(options);
  cleanups.push(() => started.dispose());
  return started;
}

function link(url: string, options: Partial<MqttLinkOptions> = {}): { link: MqttLink; events: LinkEvent[] } {
  const created = new MqttLink({
    name: 'pump',
    url,
    credentials: async () => ({ clientId: 'dev-1', username: 'token', password: 'pk' }),
    streams: ['rs485'],
    keepaliveS: 30,
    connectTimeoutMs: 5000,
    reconnect: { initialMs: 50, maxMs: 400, jitter: 0.2 },
    log: silentLogger(),
    ...options,
  });
  const events: LinkEvent[] = [];
  created.onEvent((e) => events.push(e));
  cleanups.push(() => created.stop());
  return { link: created, events };
}

async function peer(url: string, topics: string[] = []): Promise<{ client: MqttClient; received: { topic: string; payload: string }[] }> {
  const client = await mqtt.connectAsync(url, { protocolVersion: 4, clientId: `peer-${Math.random()}`, reconnectPeriod: 200 });
  const received: { topic: string; payload: string }[] = [];
  client.on('message', (topic, payload) => received.push({ topic, payload: payload.toString() }));
  if (topics.length > 0) await client.subscribeAsync(topics, { qos: 1 });
  cleanups.push(() => client.endAsync(true));
  return { client, received };
}

describe('MqttLink with mosquitto', () => {
  it('connects, subscribes, receives pushes and commands, and publishes with PUBACK', async () => {
    const mq = await broker();
    const { link: device, events } = link(mq.url);
    const inbound: { topic: string; payload: string }[] = [];
    device.onMessage((topic, payload) => inbound.push({ topic, payload: payload.toString() }));
    device.start();
    await expect.poll(() => device.isUp, { timeout: 10_000 }).toBe(true);
    expect(events).toEqual([{ type: 'up' }]);

    const cloud = await peer(mq.url, ['attributes']);
    await cloud.client.publishAsync('attributes/push', '{"sp":1}', { qos: 1 });
    await cloud.client.publishAsync('command/send/7', '{"method":"m","id":7}', { qos: 1 });
    await cloud.client.publishAsync('attributes/get/response/3', '{"result":1}', { qos: 1 });
    await cloud.client.publishAsync('data/rs485/set', 'raw', { qos: 1 });
    await cloud.client.publishAsync('data/other/set', 'ignored', { qos: 1 });
    await expect.poll(() => inbound.length, { timeout: 10_000 }).toBe(4);
    expect(inbound.map((m) => m.topic)).toEqual(['attributes/push', 'command/send/7', 'attributes/get/response/3', 'data/rs485/set']);

    await device.publish('attributes', '{"t":20}');
    await expect.poll(() => cloud.received.length, { timeout: 10_000 }).toBe(1);
    expect(cloud.received[0]).toEqual({ topic: 'attributes', payload: '{"t":20}' });
  });

  it('rejects a publish while down with LinkDownError', async () => {
    const mq = await broker();
    const { link: device } = link(mq.url);
    await expect(device.publish('attributes', '{}')).rejects.toBeInstanceOf(LinkDownError);
  });

  it('goes down with a reason when the broker stops, logs it once, and comes back with its subscriptions', async () => {
    const mq = await broker();
    const captured = captureLog();
    const { link: device, events } = link(mq.url, { log: captured.log });
    const inbound: string[] = [];
    device.onMessage((topic) => inbound.push(topic));
    device.start();
    await expect.poll(() => device.isUp, { timeout: 10_000 }).toBe(true);
    await mq.stop();
    await expect.poll(() => device.isUp, { timeout: 10_000 }).toBe(false);
    await expect.poll(() => captured.messages('cloud link reconnect scheduled').length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    expect(captured.messages('cloud link down')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'down')).toHaveLength(1);
    await mq.restart();
    await expect.poll(() => device.isUp, { timeout: 15_000 }).toBe(true);
    expect(events.map((e) => e.type)).toEqual(['up', 'down', 'up']);
    expect(captured.messages('cloud link up')).toHaveLength(2);
    const cloud = await peer(mq.url);
    await cloud.client.publishAsync('attributes/push', '{"a":1}', { qos: 1 });
    await expect.poll(() => inbound, { timeout: 10_000 }).toEqual(['attributes/push']);
  });

  it('reports a refused credential, asks for a new one, and connects with it', async () => {
    const mq = await broker({ users: { 'good-token': 'pk' } });
    let calls = 0;
    const captured = captureLog();
    const { link: device, events } = link(mq.url, {
      log: captured.log,
      credentials: async () => {
        calls += 1;
        return { clientId: 'dev-1', username: calls === 1 ? 'stale-token' : 'good-token', password: 'pk' };
      },
    });
    device.start();
    await expect.poll(() => device.isUp, { timeout: 10_000 }).toBe(true);
    const refused = events.find((e) => e.type === 'auth-refused');
    expect(refused).toMatchObject({ type: 'auth-refused' });
    expect([4, 5]).toContain(refused?.type === 'auth-refused' ? refused.code : 0);
    expect(calls).toBe(2);
    expect(captured.raw()).not.toContain('good-token');
    expect(captured.raw()).not.toContain('stale-token');
  });

  it('keeps retrying while the credential cannot be obtained', async () => {
    const mq = await broker();
    let calls = 0;
    const clock = new ManualClock();
    const { link: device, events } = link(mq.url, {
      credentials: async () => {
        calls += 1;
        if (calls < 3) throw new Error('cloud API unreachable');
        return { clientId: 'dev-1', username: 'u', password: 'p' };
      },
      time: clock,
      random: () => 0.5,
    });
    device.start();
    // Each failed attempt waits its backoff on the fake clock: nothing happens until it is advanced.
    for (const attempt of [1, 2]) {
      await expect.poll(() => clock.sleeping).toBe(1);
      expect(calls).toBe(attempt);
      clock.advance(400);
    }
    await expect.poll(() => device.isUp, { timeout: 10_000 }).toBe(true);
    expect(calls).toBe(3);
    expect(clock.delays).toHaveLength(2);
    expect(events[0]).toEqual({ type: 'down', reason: 'no credential: cloud API unreachable' });
  });

  it('stops reconnecting after stop()', async () => {
    const mq = await broker();
    const clock = new ManualClock();
    let calls = 0;
    const { link: device } = link(mq.url, {
      time: clock,
      credentials: async () => {
        calls += 1;
        if (calls === 1) throw new Error('cloud API unreachable');
        return { clientId: 'dev-1', username: 'token', password: 'pk' };
      },
    });
    device.start();
    await expect.poll(() => clock.sleeping).toBe(1);
    clock.advance(400);
    await expect.poll(() => device.isUp, { timeout: 10_000 }).toBe(true);
    await device.stop();
    expect(device.isUp).toBe(false);
    // No reconnect is left pending: however far time moves, nothing connects again.
    expect(clock.sleeping).toBe(0);
    clock.advance(60_000);
    expect(calls).toBe(2);
    expect(device.isUp).toBe(false);
  });
});

describe('MqttLink over TLS', () => {
  it('connects with the configured CA and refuses a server it cannot verify', async () => {
    const { makeTestCertificates } = await import('../../helpers/tls-certs.js');
    const { readFileSync, rmSync } = await import('node:fs');
    const certs = makeTestCertificates();
    cleanups.push(async () => rmSync(certs.dir, { recursive: true, force: true }));
    const mq = await broker({ tls: { certFile: certs.certFile, keyFile: certs.keyFile } });
    expect(mq.url.startsWith('mqtts://')).toBe(true);

    const trusted = link(mq.url, { ca: readFileSync(certs.caFile) });
    trusted.link.start();
    await expect.poll(() => trusted.link.isUp, { timeout: 10_000 }).toBe(true);

    const untrusted = link(mq.url);
    untrusted.link.start();
    await expect.poll(() => untrusted.events.length, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(untrusted.link.isUp).toBe(false);
    expect(untrusted.events[0]).toMatchObject({ type: 'down', reason: expect.stringMatching(/self.signed|unable to verify|certificate/i) });
  });
});
