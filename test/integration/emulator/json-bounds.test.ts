// Bounds on JSON inputs: nothing a client or device can store makes a later read hang or fail.
// Every write path (B POST/PUT, A7 POST/PUT, MQTT `attributes`) and every read (A6 current, raw,
// meta, series; B GET; MQTT attributes/get) is exercised with the deepest allowed value, a huge
// one, and a 5,000-deep one, each HTTP call under a client timeout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectAsync, type MqttClient } from 'mqtt';
import { DEFAULT_JSON_LIMITS } from '../../../packages/emulator/src/json-limits.js';
import { APP, PROJECT_KEY, startTestEmulator, waitFor, type TestEmulator } from './helpers.js';

const DEVICE = 'dev-meter-1';
const DEVICE_TOKEN = 'demo-meter-1-token';
const CLIENT_TIMEOUT_MS = 20_000;
const { maxDepth, maxBytes } = DEFAULT_JSON_LIMITS;

/** A JSON text nested `depth` levels deep: `{"a":{"a":...1}}`. */
function nested(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** A body `{"<key>": <value text>}` as raw text (the value may be too deep to stringify here). */
function bodyWith(key: string, valueText: string): string {
  return `{${JSON.stringify(key)}:${valueText}}`;
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

let t: TestEmulator;
let token: string;
let device: MqttClient;
const answers: { topic: string; body: Record<string, unknown> }[] = [];

async function call(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
  const auth: Record<string, string> = path.startsWith('/api/') ? { Authorization: `Bearer ${token}` } : { 'Project-Key': PROJECT_KEY };
  const res = await fetch(t.base + path, {
    method, body, headers: { 'Content-Type': 'application/json', ...auth, ...headers }, signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Writes `{key: value}` through one path; resolves once the value is stored (or pushed). */
type Write = (key: string, valueText: string) => Promise<Answer | Record<string, unknown>>;

async function mqttReport(key: string, valueText: string): Promise<Record<string, unknown>> {
  const before = answers.filter((a) => a.topic === 'attributes/response').length;
  await device.publishAsync('attributes', bodyWith(key, valueText), { qos: 1 });
  await waitFor(() => answers.filter((a) => a.topic === 'attributes/response').length > before, 10_000, 'report answer');
  return answers.filter((a) => a.topic === 'attributes/response').at(-1)?.body ?? {};
}

const storingWrites: [string, Write][] = [
  ['B POST attributes', (k, v) => call('POST', `/app/device/v1/${DEVICE_TOKEN}/attributes`, bodyWith(k, v))],
  ['B PUT attributes', (k, v) => call('PUT', `/app/device/v1/${DEVICE_TOKEN}/attributes`, bodyWith(k, v))],
  ['A7 PUT attributes', (k, v) => call('PUT', `/api/v1/control/device/${DEVICE}/attributes`, bodyWith(k, v))],
  ['MQTT attributes', mqttReport],
];

beforeAll(async () => {
  t = await startTestEmulator({ realChannel: true });
  token = await t.token();
  device = await connectAsync(`mqtt://127.0.0.1:${t.emu.mqttPort}`, {
    username: DEVICE_TOKEN, password: PROJECT_KEY, protocolVersion: 4, reconnectPeriod: 0,
  });
  device.on('message', (topic, payload) => answers.push({ topic, body: JSON.parse(payload.toString('utf8')) as Record<string, unknown> }));
  await device.subscribeAsync('#', { qos: 1 });
});

afterAll(async () => {
  await device.endAsync(true);
  await t.emu.close();
});

/** Every read of the device's attributes answers, and holds `expected` under `key`. */
async function expectReadsBack(key: string, expected: unknown): Promise<void> {
  const current = await call('GET', `/api/v1/device/${DEVICE}/attributes`);
  expect((current.body.info as { identifier: string; value: unknown }[]).find((a) => a.identifier === key)?.value).toEqual(expected);
  const raw = await call('GET', `/api/v1/device/${DEVICE}/attributes_raw?keys=${key}`);
  expect(raw.body.info).toEqual({ [key]: expected });
  const meta = await call('GET', `/api/v1/device/${DEVICE}/attributes_meta?keys=${key}`);
  expect(meta.body.info).toMatchObject({ [key]: { data_type: expect.any(String) } });
  const series = await call('GET', `/api/v1/device/${DEVICE}/attribute/${key}/series`);
  expect((series.body.info as { value: unknown }[])[0].value).toEqual(expected);
  const b = await call('GET', `/app/device/v1/${DEVICE_TOKEN}/attributes?keys=${key}`);
  expect(b.body).toEqual({ result: 1, attributes: { [key]: expected } });
  const before = answers.length;
  await device.publishAsync('attributes/get/31', JSON.stringify({ keys: [key] }), { qos: 1 });
  await waitFor(() => answers.slice(before).some((a) => a.topic === 'attributes/get/response/31'), 10_000, 'get answer');
  expect(answers.slice(before).find((a) => a.topic === 'attributes/get/response/31')?.body).toEqual({ result: 1, attributes: { [key]: expected } });
}

describe('the deepest allowed and a huge value, through every storing write path', () => {
  it.each(storingWrites)('%s: the deepest allowed value is stored and every read answers with it', async (_name, write) => {
    // The body object is level 1, so its value may be maxDepth - 1 deep.
    const key = `deep_${_name.replace(/\W/g, '_')}`;
    const text = nested(maxDepth - 1);
    const written = await write(key, text);
    expect(JSON.stringify(written)).toMatch(/"result":(1|true)/);
    await expectReadsBack(key, JSON.parse(text));
  });

  it.each(storingWrites)('%s: a value just under the size bound is stored and read back', async (_name, write) => {
    const key = `huge_${_name.replace(/\W/g, '_')}`;
    const value = 'x'.repeat(maxBytes - 100);
    const written = await write(key, JSON.stringify(value));
    expect(JSON.stringify(written)).toMatch(/"result":(1|true)/);
    await expectReadsBack(key, value);
  });
});

describe('A7 POST pushes without storing', () => {
  it('the deepest allowed value reaches the device on attributes/push', async () => {
    const before = answers.length;
    const text = nested(maxDepth - 1);
    expect((await call('POST', `/api/v1/control/device/${DEVICE}/attributes`, bodyWith('pushed', text))).body).toEqual({ result: true, info: {} });
    await waitFor(() => answers.slice(before).some((a) => a.topic === 'attributes/push'), 10_000, 'push');
    expect(answers.slice(before).find((a) => a.topic === 'attributes/push')?.body).toEqual({ pushed: JSON.parse(text) });
  });
});

describe('a 5,000-deep value is refused on every path, with the interface 400 shape', () => {
  const deep = nested(5000);
  const a400 = { status: 200, body: { result: false, errcode: 400, errors: [{ field: '(body)', message: `JSON nested deeper than ${maxDepth} levels` }] } };
  const b400 = { status: 200, body: { result: 0, errcode: 400 } };
  it.each([
    ['B POST attributes', 'POST', `/app/device/v1/${DEVICE_TOKEN}/attributes`, b400],
    ['B PUT attributes', 'PUT', `/app/device/v1/${DEVICE_TOKEN}/attributes`, b400],
    ['B command/send', 'POST', `/app/device/v1/${DEVICE_TOKEN}/command/send`, b400],
    ['B data set', 'POST', `/app/device/v1/${DEVICE_TOKEN}/data/console/set`, b400],
    ['A7 POST attributes (was 500)', 'POST', `/api/v1/control/device/${DEVICE}/attributes`, a400],
    ['A7 PUT attributes', 'PUT', `/api/v1/control/device/${DEVICE}/attributes`, a400],
    ['A7 command', 'POST', `/api/v1/control/device/${DEVICE}/command`, a400],
    ['A4 create device', 'POST', '/api/v1/device', a400],
    ['A4 tags', 'PUT', `/api/v1/device/${DEVICE}/tags`, a400],
    ['A5 extend_infos', 'POST', `/api/v1/device/${DEVICE}/extend_infos`, a400],
    ['A9 create customer', 'POST', '/api/v1/customer', a400],
  ] as const)('%s', async (_name, method, path, want) => {
    const res = await call(method, path, bodyWith('params', deep));
    expect(res).toMatchObject(want);
  });

  it('A1 token exchange (no token needed) answers 400 too', async () => {
    const res = await call('POST', '/api/v1/access_token', `{"app_id":${JSON.stringify(APP.app_id)},"x":${deep}}`);
    expect(res).toMatchObject(a400);
  });

  it('B GET sync send with a too deep ?params= answers 400', async () => {
    const res = await call('GET', `/app/device/v1/${DEVICE_TOKEN}/command/sync/send?method=m&id=1&params=${encodeURIComponent(nested(maxDepth + 1))}`);
    expect(res).toMatchObject({ status: 200, body: { result: 0, errcode: 400, errors: [{ field: 'params', message: `JSON nested deeper than ${maxDepth} levels` }] } });
  });

  it('a 5,000-deep ?params= makes the URL too long for Node: HTTP 431 (no JSON body), not a hang', async () => {
    const res = await fetch(`${t.base}/app/device/v1/${DEVICE_TOKEN}/command/sync/send?method=m&id=1&params=${encodeURIComponent(deep)}`, {
      headers: { 'Project-Key': PROJECT_KEY }, signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    expect(res.status).toBe(431);
  });

  it.each([
    ['attributes/get/41', 'attributes/get/response/41', `{"keys":${deep}}`],
    ['command/reply/42', 'command/reply/response/42', `{"method":"m","id":42,"params":${deep}}`],
    ['event/report/43', 'event/response/43', `{"method":"m","params":${deep}}`],
  ])('MQTT %s: answered with errcode 400 on %s, connection kept', async (topic, responseTopic, payload) => {
    const before = answers.length;
    await device.publishAsync(topic, payload, { qos: 1 });
    await waitFor(() => answers.slice(before).some((a) => a.topic === responseTopic), 10_000, responseTopic);
    expect(answers.slice(before).find((a) => a.topic === responseTopic)?.body).toEqual({ result: 0, errcode: 400, message: `JSON nested deeper than ${maxDepth} levels` });
    expect(device.connected).toBe(true);
  });

  it('MQTT attributes: answered with errcode 400 on attributes/response, nothing stored, connection kept', async () => {
    const answer = await mqttReport('too_deep', deep);
    expect(answer).toEqual({ result: 0, errcode: 400, message: `JSON nested deeper than ${maxDepth} levels` });
    expect(device.connected).toBe(true);
    expect(t.emu.state.devices.get(DEVICE)?.attributes.has('too_deep')).toBe(false);
    const raw = await call('GET', `/api/v1/device/${DEVICE}/attributes_raw`);
    expect(raw.body.result).toBe(true);
  });

  it('nothing of the refused writes was stored: every read answers', async () => {
    const current = await call('GET', `/api/v1/device/${DEVICE}/attributes`);
    expect(current.status).toBe(200);
    expect((current.body.info as { identifier: string }[]).some((a) => a.identifier === 'params')).toBe(false);
  });
});

describe('one byte over the size bound', () => {
  it.each([
    ['B POST attributes', 'POST', `/app/device/v1/${DEVICE_TOKEN}/attributes`, { result: 0, errcode: 413 }],
    ['A7 POST attributes', 'POST', `/api/v1/control/device/${DEVICE}/attributes`, { result: false, errcode: 413 }],
  ] as const)('%s answers errcode 413', async (_name, method, path, want) => {
    const body = bodyWith('big', JSON.stringify('y'.repeat(maxBytes)));
    expect(Buffer.byteLength(body)).toBeGreaterThan(maxBytes);
    const res = await call(method, path, body);
    expect(res).toMatchObject({ status: 200, body: want });
  });

  it('MQTT answers errcode 413 and keeps the connection', async () => {
    const answer = await mqttReport('big', JSON.stringify('y'.repeat(maxBytes)));
    expect(answer).toEqual({ result: 0, errcode: 413, message: `JSON larger than ${maxBytes} bytes` });
    expect(device.connected).toBe(true);
    expect(t.emu.state.devices.get(DEVICE)?.attributes.has('big')).toBe(false);
  });
});

describe('a stored value that cannot be serialised (state corrupted behind the API)', () => {
  it('still ends every read with the interface 500 body', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const d = t.emu.state.devices.get(DEVICE);
    d?.attributes.set('broken', { value: circular, attr_type: 'cloud', ts: Date.now() });
    try {
      for (const path of [`/api/v1/device/${DEVICE}/attributes`, `/api/v1/device/${DEVICE}/attributes_raw`]) {
        expect(await call('GET', path)).toEqual({ status: 500, body: { result: false, errcode: 500, message: 'Internal error', errors: [] } });
      }
      expect(await call('GET', `/app/device/v1/${DEVICE_TOKEN}/attributes`)).toEqual({ status: 500, body: { result: 0, errcode: 500, message: 'Internal error' } });
    } finally {
      d?.attributes.delete('broken');
    }
    expect((await call('GET', `/api/v1/device/${DEVICE}/attributes_raw`)).status).toBe(200);
  });
});
