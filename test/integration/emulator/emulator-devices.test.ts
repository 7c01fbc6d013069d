// The whole emulator with its real device channel: mqtt.js and mosquitto devices, TCP streams.
import { spawn, type ChildProcess } from 'node:child_process';
import { connect as tcpConnect, type Socket } from 'node:net';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_KEY, startTestEmulator, type TestEmulator } from './helpers.js';
import { requireProgram } from '../../helpers/peers.js';

const B1 = '/app/device/v1/demo-meter-1-token';

describe('emulator with the real device channel', () => {
  let t: TestEmulator;
  const clients: MqttClient[] = [];
  const children: ChildProcess[] = [];
  const sockets: Socket[] = [];

  beforeAll(async () => { t = await startTestEmulator({ realChannel: true }); });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.endAsync(true)));
    for (const child of children.splice(0)) child.kill('SIGTERM');
    for (const s of sockets.splice(0)) s.destroy();
    await expect.poll(() => t.emu.state.isOnline('dev-meter-1'), { timeout: 10_000 }).toBe(false);
  });
  afterAll(async () => { await t.emu.close(); });

  async function device(token: string, id: string): Promise<MqttClient> {
    const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${t.emu.mqttPort}`, {
      username: token, password: PROJECT_KEY, clientId: id, protocolVersion: 4, reconnectPeriod: 0,
    });
    clients.push(client);
    return client;
  }

  it('tracks online state and stores reports as attr_type report', async () => {
    const client = await device('demo-meter-1-token', 'meter-1');
    await expect.poll(async () => (await t.api('GET', '/api/v1/devices_stat')).body.info.online_device_total).toBe(1);
    expect((await t.api('GET', '/api/v1/device/dev-meter-1')).body.info.online).toBe(true);
    await client.publishAsync('attributes', JSON.stringify({ voltage: 228.5, relay: false }), { qos: 1 });
    await expect.poll(async () => (await t.api('GET', '/api/v1/device/dev-meter-1/attributes_raw?keys=voltage,relay')).body.info)
      .toEqual({ voltage: 228.5, relay: false });
    const meta = (await t.api('GET', '/api/v1/device/dev-meter-1/attributes_meta?keys=voltage')).body.info;
    expect(meta.voltage.type).toBe('report');
  });

  it('answers attributes/get/<id> from the state', async () => {
    const client = await device('demo-meter-1-token', 'meter-1');
    await t.app('PUT', `${B1}/attributes`, { limit: 7 });
    await client.subscribeAsync('attributes/get/response/+', { qos: 1 });
    const got = new Promise<{ topic: string; body: unknown }>((resolve) => client.once('message', (topic, payload) => resolve({ topic, body: JSON.parse(payload.toString()) })));
    await client.publishAsync('attributes/get/5', JSON.stringify({ keys: ['limit'] }), { qos: 1 });
    expect(await got).toEqual({ topic: 'attributes/get/response/5', body: { result: 1, attributes: { limit: 7 } } });
  });

  it('B sync send is answered by a device replying on command/reply/<id>', async () => {
    const client = await device('demo-meter-1-token', 'meter-1');
    await client.subscribeAsync('command/send/+', { qos: 1 });
    client.on('message', (topic, payload) => {
      const cmd = JSON.parse(payload.toString()) as { method: string; id: number };
      const id = topic.split('/')[2];
      void client.publishAsync(`command/reply/${id}`, JSON.stringify({ method: cmd.method, params: { done: true }, id: cmd.id }), { qos: 1 });
    });
    const r = await t.app('POST', `${B1}/command/sync/send`, { method: 'reset', params: {}, id: 123456 });
    expect(r.body).toEqual({ result: 1, command: { method: 'reset', params: { done: true }, id: 123456 } });
  });

  it('B sync send times out after 5 s when the device stays silent', async () => {
    await device('demo-meter-1-token', 'meter-1');
    const started = Date.now();
    const r = await t.app('POST', `${B1}/command/sync/send`, { method: 'reset', params: {}, id: 11 });
    expect(r.body).toEqual({ result: 0, message: 'Waiting for command sync reply timeout', errcode: 410 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(4900);
  });

  it('delivers B hex data as raw bytes on data/<identifier>/set', async () => {
    const client = await device('demo-meter-1-token', 'meter-1');
    await client.subscribeAsync('data/serial_raw/set', { qos: 1 });
    const got = new Promise<Buffer>((resolve) => client.once('message', (_t, payload) => resolve(payload)));
    expect((await t.app('POST', `${B1}/data/serial_raw/set?push_mode=mqtt`, { type: 'hex', msg: '01 03 00 00 00 0A' })).body.result).toBe(1);
    expect([...(await got)]).toEqual([1, 3, 0, 0, 0, 10]);
  });

  it('delivers an A7 attribute push to mosquitto_sub logged in as the device', async () => {
    requireProgram('mosquitto_sub');
    const sub = spawn('mosquitto_sub', ['-h', '127.0.0.1', '-p', String(t.emu.mqttPort), '-u', 'demo-meter-1-token', '-P', PROJECT_KEY,
      '-i', 'meter-1-sub', '-t', 'attributes/push', '-C', '1', '-V', 'mqttv311', '-q', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(sub);
    let out = '';
    sub.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    await expect.poll(() => t.emu.state.isOnline('dev-meter-1'), { timeout: 10_000 }).toBe(true);
    // The subscription may land just after CONNACK: push until it arrives.
    await expect.poll(async () => {
      await t.api('POST', '/api/v1/control/device/dev-meter-1/attributes', { setpoint: 321 });
      return out;
    }, { timeout: 10_000, interval: 200 }).toContain('{"setpoint":321}');
  });

  it('carries stream bytes both ways over a registered TCP socket', async () => {
    const socket = tcpConnect(t.emu.tcpPort, '127.0.0.1');
    sockets.push(socket);
    let received = Buffer.alloc(0);
    socket.on('data', (c: Buffer) => { received = Buffer.concat([received, c]); });
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(`${PROJECT_KEY}&demo-meter-1-token\r\n`);
    await expect.poll(() => t.emu.state.isOnline('dev-meter-1'), { timeout: 10_000 }).toBe(true);
    const r = await t.api('POST', '/api/v1/control/device/dev-meter-1/data/serial_raw/set?push_mode=tcp', { type: 'hex', msg: 'aa bb' });
    expect(r.body.result).toBe(true);
    await expect.poll(() => [...received]).toEqual([0xaa, 0xbb]);
    socket.write(Buffer.from([1, 2, 3]));
    await expect.poll(() => t.emu.link.streamLog.get('dev-meter-1')?.at(-1)?.data.toString('hex')).toBe('010203');
  });
});
