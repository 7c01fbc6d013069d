// A gateway as an adversary: speaking for devices not bound to it, hostile payloads, flooding.
// Every refusal is answered (or, for non-JSON, the connection dropped) and harms no other device.
import { connectAsync } from 'mqtt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PROJECT_KEY, type TestEmulator } from './helpers.js';
import { currentValues, Gateways, isOnline, startGatewaySite, until } from './gateway-fixtures.js';

let t: TestEmulator;
const gateways = new Gateways(() => t);
const gateway = (token?: string) => gateways.connect(token);

const raw = (deviceId: string) => currentValues(t, deviceId);
const online = (deviceId: string) => isOnline(t, deviceId);
const REPORT = 'gateway/attributes';
const REPORT_ACK = 'gateway/attributes/response';

beforeEach(async () => {
  t = await startGatewaySite({ jsonLimits: { maxDepth: 16, maxBytes: 64 * 1024 } });
});

afterEach(async () => {
  await gateways.closeAll();
  await t.emu.close();
});

describe('scoping', () => {
  it('stores a gateway\'s own sub-devices and refuses foreign and unknown addresses in the same batch', async () => {
    const gw2 = await gateway('gw-2-token');
    // "1" on gw-2 is dev-sub-3; "2" is dev-sub-2 only on gw-1; "free" is bound nowhere.
    const answer = await gw2.request(REPORT, { 1: { voltage: 1 }, 2: { voltage: 2 }, 'dev-sub-free': { voltage: 3 } }, REPORT_ACK);
    expect(answer).toMatchObject({ result: 0, errcode: 404, device: '2', devices: ['2', 'dev-sub-free'] });
    expect(await raw('dev-sub-3')).toEqual({ voltage: 1 });
    expect([await raw('dev-sub-1'), await raw('dev-sub-2'), await raw('dev-sub-free')]).toEqual([{}, {}, {}]);
  });

  it('refuses connect, disconnect, events, reads and replies for a foreign sub-device', async () => {
    const gw1 = await gateway();
    await gw1.request('gateway/connect', { device: '2' }, 'gateway/connect/response');
    const gw2 = await gateway('gw-2-token');
    for (const [topic, payload, response] of [
      ['gateway/connect', { device: '2' }, 'gateway/connect/response'],
      ['gateway/disconnect', { device: '2' }, 'gateway/disconnect/response'],
      ['gateway/event/report', { device: '2', event: { method: 'x' } }, 'gateway/event/response'],
      ['gateway/attributes/get', { device: '2' }, 'gateway/attributes/get/response'],
      ['gateway/command/reply', { device: '2', command: { id: 1, method: 'x' } }, 'gateway/command/reply/response'],
    ] as const) {
      expect(await gw2.request(topic, payload, response)).toMatchObject({ result: 0, errcode: 404, device: '2' });
    }
    expect(await online('dev-sub-2')).toBe(true);
    expect(t.emu.link.eventLog.get('dev-sub-2')).toBeUndefined();
  });

  it('refuses gateway topics from a direct device (errcode 403) and keeps it connected', async () => {
    const direct = await gateway('direct-token');
    expect(await direct.request(REPORT, { 1: { voltage: 9 } }, REPORT_ACK)).toEqual({ result: 0, errcode: 403, message: 'device is not a gateway' });
    expect(await direct.request('gateway/connect', { device: '1' }, 'gateway/connect/response')).toMatchObject({ errcode: 403, device: '1' });
    expect(await raw('dev-sub-1')).toEqual({});
    expect(await online('dev-sub-1')).toBe(false);
    expect(direct.closed()).toBe(false);
  });

  it('leaves the sub-devices of a deleted gateway unbound and offline', async () => {
    const gw = await gateway();
    await gw.request('gateway/connect', { device: '1' }, 'gateway/connect/response');
    expect((await t.api('DELETE', '/api/v1/device/dev-gw-1')).body.result).toBe(true);
    expect(await online('dev-sub-1')).toBe(false);
    // its connection stays until it closes, but it is no gateway any more
    expect(await gw.request(REPORT, { 1: { voltage: 5 } }, REPORT_ACK)).toMatchObject({ errcode: 403 });
    expect(await raw('dev-sub-1')).toEqual({});
  });
});

describe('hostile payloads', () => {
  it.each([
    ['deep', `{"1":{"v":${'['.repeat(40)}${']'.repeat(40)}}}`, 400],
    ['huge', JSON.stringify({ 1: { v: 'x'.repeat(70 * 1024) } }), 413],
    ['an array', '[{"1":{"v":1}}]', 400],
    ['a number per address', '{"1":5}', 400],
    ['a null attribute', '{"1":{"v":null}}', 400],
    ['a duplicated address', '{"1":{"voltage":1},"2":{"voltage":2},"1":{"voltage":3}}', 400],
  ])('refuses a %s batch as a whole, answers it and stays connected', async (_name, payload, errcode) => {
    const gw = await gateway();
    expect(await gw.request(REPORT, payload, REPORT_ACK)).toMatchObject({ result: 0, errcode });
    expect([await raw('dev-sub-1'), await raw('dev-sub-2')]).toEqual([{}, {}]);
    expect(await gw.request(REPORT, { 1: { voltage: 230 } }, REPORT_ACK)).toMatchObject({ result: 1 });
    expect(gw.closed()).toBe(false);
  });

  it.each([
    ['gateway/connect', '{"device":1}'],
    ['gateway/connect', '{"addr":"1"}'],
    ['gateway/event/report', '{"device":"1","event":"trip"}'],
    ['gateway/attributes/get', '{"device":"1","keys":[1]}'],
    ['gateway/command/reply', '{"device":"1","command":{"method":"m","id":"7"}}'],
  ])('answers %s %s with errcode 400', async (topic, payload) => {
    const gw = await gateway();
    const response = topic === 'gateway/event/report' ? 'gateway/event/response' : `${topic}/response`;
    expect(await gw.request(topic, payload, response)).toMatchObject({ result: 0, errcode: 400 });
    expect(await online('dev-sub-1')).toBe(false);
  });

  it('drops the gateway\'s connection for a non-JSON payload, taking its sub-devices offline', async () => {
    const gw = await gateway();
    await gw.request('gateway/connect', { device: '1' }, 'gateway/connect/response');
    gw.client.publish(REPORT, '{"1":{"voltage":', { qos: 1 });
    await until(() => gw.closed(), 'the gateway connection to close');
    await expect.poll(() => online('dev-sub-1')).toBe(false);
    expect(await raw('dev-sub-1')).toEqual({});
  });

  it('survives a flood of refused and accepted messages while a direct device and another gateway go on', async () => {
    const flooder = await gateway();
    const other = await gateway('gw-2-token');
    const direct = await connectAsync(`mqtt://127.0.0.1:${t.emu.mqttPort}`, { username: 'direct-token', password: PROJECT_KEY, protocolVersion: 4, reconnectPeriod: 0 });
    try {
      const bad = ['{"9":{"v":1}}', '[1]', '{"1":{"v":null}}', `{"1":${'['.repeat(30)}${']'.repeat(30)}}`, '{"1":{"voltage":1},"1":{"voltage":2}}'];
      const flood = Array.from({ length: 500 }, (_, i) => flooder.client.publishAsync(REPORT, bad[i % bad.length], { qos: 1 }));
      const good = Array.from({ length: 50 }, (_, i) => flooder.client.publishAsync(REPORT, JSON.stringify({ 2: { seq: i } }), { qos: 1 }));
      await other.request(REPORT, { 1: { voltage: 7 } }, REPORT_ACK);
      await direct.publishAsync('attributes', JSON.stringify({ voltage: 8 }), { qos: 1 });
      await Promise.all([...flood, ...good]);
      await until(() => flooder.on(REPORT_ACK).length === 550, 'every flood message answered');
      const answers = flooder.on(REPORT_ACK);
      expect(answers.filter((a) => a.result === 1)).toHaveLength(50);
      // one unknown address, four wrong shapes (array, null, deep, duplicate) per five
      expect(answers.filter((a) => a.errcode === 404)).toHaveLength(100);
      expect(answers.filter((a) => a.errcode === 400)).toHaveLength(400);
      expect(await raw('dev-sub-2')).toEqual({ seq: 49 });
      const history = (await t.api('GET', '/api/v1/device/dev-sub-2/attribute/seq/series?page_records=500')).body.info as { value: number }[];
      expect(history.map((p) => p.value)).toEqual(Array.from({ length: 50 }, (_, i) => 49 - i));
      expect(await raw('dev-sub-3')).toEqual({ voltage: 7 });
      expect(await raw('dev-direct')).toEqual({ voltage: 8 });
      expect(await raw('dev-sub-1')).toEqual({});
      expect(flooder.closed()).toBe(false);
    } finally {
      await direct.endAsync(true);
    }
  });
});
