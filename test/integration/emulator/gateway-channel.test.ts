// The gateway sub-device protocol end to end: a real mqtt.js gateway against the emulator, with
// the results read back through interfaces A and B as any application would.
import { createConnection } from 'node:net';
import { connectAsync } from 'mqtt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PROJECT_KEY, startTestEmulator, type TestEmulator } from './helpers.js';
import { currentValues, Gateways, isOnline, startGatewaySite, until } from './gateway-fixtures.js';

let t: TestEmulator;
const gateways = new Gateways(() => t);
const gateway = (token?: string) => gateways.connect(token);

const online = (deviceId: string) => isOnline(t, deviceId);
const raw = (deviceId: string) => currentValues(t, deviceId);
const series = async (deviceId: string, name: string) =>
  (await t.api('GET', `/api/v1/device/${deviceId}/attribute/${name}/series`)).body.info as { value: unknown; type: string }[];

beforeEach(async () => {
  t = await startGatewaySite();
});

afterEach(async () => {
  await gateways.closeAll();
  await t.emu.close();
});

describe('gateway identity', () => {
  it('answers the certificate request of a gateway with conn_type "3", of a sub-device with its type\'s', async () => {
    const gw = await t.app('POST', '/device/v1/certificate', { device_key: 'gw-1' });
    expect(gw.body).toMatchObject({ result: 1, device: { id: 'dev-gw-1', access_token: 'gw-1-token', conn_type: '3' } });
    const sub = await t.app('POST', '/device/v1/certificate', { device_key: 'sub-1' });
    expect(sub.body.device).toMatchObject({ id: 'dev-sub-1', conn_type: '1' });
    const types = (await t.api('GET', '/api/v1/device_types')).body.info.items as { id: string; conn_type: string }[];
    expect(types.find((x) => x.id === 'type-gateway')?.conn_type).toBe('3');
  });

  it('refuses a sub-device logging in directly: it reaches the cloud only through its gateway', async () => {
    const attempt = connectAsync(`mqtt://127.0.0.1:${t.emu.mqttPort}`, { username: 'sub-1-token', password: PROJECT_KEY, protocolVersion: 4, reconnectPeriod: 0 });
    await expect(attempt).rejects.toMatchObject({ code: 5 });
    const socket = createConnection(t.emu.tcpPort, '127.0.0.1');
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => undefined);
    socket.write(`${PROJECT_KEY}&sub-1-token\r\n`);
    await closed;
    expect(await online('dev-sub-1')).toBe(false);
  });
});

describe('uplinks through the gateway', () => {
  it('lands a batched report of several sub-devices in each one\'s current values and history (A and B)', async () => {
    const gw = await gateway();
    const answer = await gw.request('gateway/attributes', { 1: { voltage: 230.5, state: 'run' }, 2: { voltage: 231.5 } }, 'gateway/attributes/response');
    expect(answer).toEqual({ result: 1, ts: expect.any(Number) });
    expect(await raw('dev-sub-1')).toEqual({ voltage: 230.5, state: 'run' });
    expect(await raw('dev-sub-2')).toEqual({ voltage: 231.5 });
    expect(await raw('dev-gw-1')).toEqual({});
    await gw.request('gateway/attributes', { 1: { voltage: 229 } }, 'gateway/attributes/response');
    expect((await series('dev-sub-1', 'voltage')).map((p) => [p.value, p.type])).toEqual([[229, 'report'], [230.5, 'report']]);
    const b = await t.app('GET', '/app/device/v1/sub-2-token/attributes');
    expect(b.body).toEqual({ result: 1, attributes: { voltage: 231.5 } });
    const device = (await t.api('GET', '/api/v1/device/dev-sub-1')).body.info;
    expect(Object.keys(device.active)).toContain('attributes');
    // A report does not make a sub-device online: only gateway/connect does.
    expect(device.online).toBe(false);
  });

  it('drives each sub-device\'s online state by gateway/connect and gateway/disconnect, and drops all with the gateway', async () => {
    const gw = await gateway();
    expect(await online('dev-gw-1')).toBe(true);
    expect(await gw.request('gateway/connect', { device: '1' }, 'gateway/connect/response')).toEqual({ result: 1, ts: expect.any(Number) });
    await gw.request('gateway/connect', { device: '2' }, 'gateway/connect/response');
    expect([await online('dev-sub-1'), await online('dev-sub-2'), await online('dev-sub-3')]).toEqual([true, true, false]);
    expect((await t.api('GET', '/api/v1/devices_stat')).body.info.online_device_total).toBe(3);
    await gw.request('gateway/disconnect', { device: '1' }, 'gateway/disconnect/response');
    expect([await online('dev-sub-1'), await online('dev-sub-2')]).toEqual([false, true]);
    await gw.client.endAsync();
    await expect.poll(() => online('dev-sub-2')).toBe(false);
    expect(await online('dev-gw-1')).toBe(false);
  });

  it('records a sub-device event and answers gateway/attributes/get with the sub-device\'s values', async () => {
    const gw = await gateway();
    await gw.request('gateway/attributes', { 2: { voltage: 240, relay: true } }, 'gateway/attributes/response');
    expect(await gw.request('gateway/event/report', { device: '2', event: { method: 'trip', params: { phase: 'L1' } } }, 'gateway/event/response'))
      .toEqual({ result: 1, ts: expect.any(Number) });
    expect(t.emu.link.eventLog.get('dev-sub-2')?.map((e) => [e.method, e.params])).toEqual([['trip', { phase: 'L1' }]]);
    expect(await gw.request('gateway/attributes/get', { device: '2', keys: ['relay', 'nope'] }, 'gateway/attributes/get/response'))
      .toEqual({ device: '2', result: 1, attributes: { relay: true } });
    expect(await gw.request('gateway/attributes/get', { device: '1' }, 'gateway/attributes/get/response'))
      .toEqual({ device: '1', result: 1, attributes: {} });
  });

  it('shows a sub-device\'s alarms as a direct device\'s', async () => {
    const device = (await t.api('GET', '/api/v1/device/dev-sub-2')).body.info;
    expect(device.alarm).toEqual({ alarm_level: 3, alarm_status: 1 });
    expect((await t.api('GET', '/api/v1/devices_alarm_stat')).body.info).toMatchObject({ alarm_3_total: 1 });
    const logs = (await t.api('GET', '/api/v1/device/dev-sub-2/alarm_logs')).body.info.items as { id: string }[];
    expect(logs.map((l) => l.id)).toEqual(['alm-sub-2']);
  });
});

describe('cloud to sub-device through the gateway', () => {
  it('routes A7 and B pushes to gateway/attributes/push in either documented shape', async () => {
    const gw = await gateway();
    const other = await gateway('gw-2-token');
    expect((await t.api('POST', '/api/v1/control/device/dev-sub-1/attributes', { relay: true })).body.result).toBe(true);
    await until(() => gw.on('gateway/attributes/push').length === 1, 'keyed push');
    expect(gw.on('gateway/attributes/push')[0]).toEqual({ 1: { relay: true } });
    t.emu.link.gatewayPushShape = 'device';
    expect((await t.app('POST', '/app/device/v1/sub-2-token/attributes', { setpoint: 7 })).body.result).toBe(1);
    await until(() => gw.on('gateway/attributes/push').length === 2, 'device-shaped push');
    expect(gw.on('gateway/attributes/push')[1]).toEqual({ device: '2', attributes: { setpoint: 7 } });
    // B stores what it pushes, on the sub-device
    expect((await t.api('GET', '/api/v1/device/dev-sub-2/attributes_meta')).body.info.setpoint).toMatchObject({ type: 'push' });
    // nothing leaked to the other gateway or onto direct topics
    expect(other.received).toEqual([]);
    expect(gw.received.every((m) => m.topic.startsWith('gateway/'))).toBe(true);
  });

  it('sends commands on gateway/command/send and completes a sync command with the gateway/command/reply', async () => {
    const gw = await gateway();
    await t.api('POST', '/api/v1/control/device/dev-sub-1/command', { method: 'reset', params: { hard: true }, id: 12 });
    await until(() => gw.on('gateway/command/send').length === 1, 'command');
    expect(gw.on('gateway/command/send')[0]).toEqual({ device: '1', command: { id: 12, method: 'reset', params: { hard: true } } });

    gw.client.on('message', (topic, payload) => {
      const sent = JSON.parse(payload.toString('utf8')) as { device: string; command: { id: number; method: string } };
      if (topic !== 'gateway/command/send' || sent.command.method !== 'read') return;
      void gw.client.publishAsync('gateway/command/reply', JSON.stringify({
        device: sent.device, command: { id: sent.command.id, method: 'read', params: { value: 42, from: sent.device } },
      }), { qos: 1 });
    });
    const sync = await t.app('POST', '/app/device/v1/sub-2-token/command/sync/send', { method: 'read', params: { reg: 3 }, id: 77 });
    expect(sync.body).toEqual({ result: 1, command: { method: 'read', params: { value: 42, from: '2' }, id: 77 } });
    await until(() => gw.on('gateway/command/reply/response').length === 1, 'reply ack');
    expect(gw.on('gateway/command/reply/response')[0]).toEqual({ result: 1, ts: expect.any(Number) });
  });

  it('does not complete a sync command with a reply from another sub-device or another gateway', async () => {
    t = await restartWithSyncTimeout(t, 400);
    const gw = await gateway();
    const gw2 = await gateway('gw-2-token');
    const pending = t.app('POST', '/app/device/v1/sub-1-token/command/sync/send', { method: 'read', id: 5 });
    await until(() => gw.on('gateway/command/send').length === 1, 'sync command');
    await gw.request('gateway/command/reply', { device: '2', command: { id: 5, method: 'read', params: { wrong: 'sub' } } }, 'gateway/command/reply/response');
    // gw-2's "1" is dev-sub-3, not dev-sub-1
    await gw2.request('gateway/command/reply', { device: '1', command: { id: 5, method: 'read', params: { wrong: 'gateway' } } }, 'gateway/command/reply/response');
    expect((await pending).body).toMatchObject({ result: 0, errcode: 410 });
  });

  it('refuses a data set to a sub-device on A7 and B with errcode 400, sending nothing', async () => {
    const gw = await gateway();
    const a = await t.api('POST', '/api/v1/control/device/dev-sub-1/data/serial_raw/set?push_mode=mqtt', { type: 'hex', msg: '01 02' });
    expect(a.body).toMatchObject({ result: false, errcode: 400, message: 'sub-device has no custom data channel' });
    const b = await t.app('POST', '/app/device/v1/sub-1-token/data/serial_raw/set', { type: 'hex', msg: '01 02' });
    expect(b.body).toMatchObject({ result: 0, errcode: 400, message: 'sub-device has no custom data channel' });
    await t.api('POST', '/api/v1/control/device/dev-sub-1/attributes', { marker: 1 });
    await until(() => gw.received.length === 1, 'marker push');
    expect(gw.received.map((m) => m.topic)).toEqual(['gateway/attributes/push']);
  });

  it('accepts and drops pushes to an unbound sub-device or one whose gateway is offline', async () => {
    expect((await t.api('POST', '/api/v1/control/device/dev-sub-free/attributes', { a: 1 })).body.result).toBe(true);
    expect((await t.app('POST', '/app/device/v1/sub-3-token/command/send', { method: 'm', id: 1 })).body.result).toBe(1);
  });
});

async function restartWithSyncTimeout(current: TestEmulator, syncReplyTimeoutMs: number): Promise<TestEmulator> {
  await current.emu.close();
  return startGatewaySite({ syncReplyTimeoutMs });
}

describe('the sample seed\'s gateway', () => {
  it('speaks for dev-meter-4 at address "4" and for nothing else', async () => {
    await t.emu.close();
    t = await startTestEmulator({ realChannel: true });
    const gw = await gateway('demo-gateway-token');
    expect(await gw.request('gateway/connect', { device: '4' }, 'gateway/connect/response')).toMatchObject({ result: 1 });
    expect(await gw.request('gateway/attributes', { 4: { voltage: 230.2 }, 1: { voltage: 1 } }, 'gateway/attributes/response'))
      .toMatchObject({ result: 0, errcode: 404, devices: ['1'] });
    expect(await raw('dev-meter-4')).toEqual({ voltage: 230.2 });
    expect(await raw('dev-meter-1')).toEqual({ voltage: 231, setpoint: 400 });
    expect(await online('dev-meter-4')).toBe(true);
  });
});
