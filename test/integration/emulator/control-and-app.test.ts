// A7 control, interface B and the certificate endpoint, against a fake device channel.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, type TestEmulator } from './helpers.js';

const B = '/app/device/v1/demo-meter-1-token';

describe('emulator: device communication over A7 and B (fake channel)', () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ syncReplyTimeoutMs: 300 });
    t.channel?.online.add('dev-meter-1');
    t.channel?.tcpDevices.add('dev-meter-1');
  });
  afterAll(async () => { await t.emu.close(); });
  const last = () => t.channel!.published.at(-1)!;

  it('gives the channel the state as directory', () => {
    const dir = t.channel!.options!.directory;
    expect(dir.authenticate('demo-meter-2-token', 'demo-project-key')).toBe('dev-meter-2');
    expect(dir.authenticate('demo-meter-2-token', 'wrong')).toBeUndefined();
    expect(dir.authenticate('nope', 'demo-project-key')).toBeUndefined();
  });

  it('A7 pushes attributes without storing them', async () => {
    expect((await t.api('POST', '/api/v1/control/device/dev-meter-1/attributes', { relay: true })).body).toEqual({ result: true, info: {} });
    expect(last()).toMatchObject({ deviceId: 'dev-meter-1', topic: 'attributes/push' });
    expect(JSON.parse(last().payload.toString())).toEqual({ relay: true });
    expect((await t.api('GET', '/api/v1/device/dev-meter-1/attributes_raw?keys=relay')).body.info).toEqual({});
  });

  it('A7 PUT stores cloud-private attributes and sends nothing', async () => {
    const before = t.channel!.published.length;
    expect((await t.api('PUT', '/api/v1/control/device/dev-meter-1/attributes', { note: 'hi' })).body.result).toBe(true);
    expect(t.channel!.published.length).toBe(before);
    expect((await t.api('GET', '/api/v1/device/dev-meter-1/attributes_meta?keys=note')).body.info.note.type).toBe('cloud');
  });

  it('A7 sends commands on command/send/<id>', async () => {
    await t.api('POST', '/api/v1/control/device/dev-meter-1/command', { method: 'reboot', params: { delay: 1 }, id: 42 });
    expect(last().topic).toBe('command/send/42');
    expect(JSON.parse(last().payload.toString())).toEqual({ method: 'reboot', params: { delay: 1 }, id: 42 });
  });

  it.each([
    ['hex', '01 03 00 00', Buffer.from([1, 3, 0, 0])],
    ['text', 'héllo', Buffer.from('héllo', 'utf8')],
    ['json', { a: 1 }, Buffer.from('{"a":1}')],
  ])('A7 data/<id>/set frames %s raw on MQTT', async (type, msg, bytes) => {
    const r = await t.api('POST', '/api/v1/control/device/dev-meter-1/data/serial_raw/set?push_mode=mqtt', { type, msg });
    expect(r.body).toEqual({ result: true, info: {} });
    expect(last().topic).toBe('data/serial_raw/set');
    expect(last().payload.equals(bytes)).toBe(true);
  });

  it('A7 data/<id>/set with push_mode=tcp writes the device\'s TCP stream', async () => {
    await t.api('POST', '/api/v1/control/device/dev-meter-1/data/serial_raw/set?push_mode=tcp', { type: 'hex', msg: 'ff00' });
    expect(t.channel!.tcpSent.at(-1)).toEqual({ deviceId: 'dev-meter-1', data: Buffer.from([0xff, 0]) });
  });

  it.each([
    ['', { type: 'hex', msg: '01' }, 400], ['?push_mode=udp', { type: 'hex', msg: '01' }, 400],
    ['?push_mode=mqtt', { type: 'hex', msg: '0g' }, 400], ['?push_mode=mqtt', { type: 'hex', msg: '010' }, 400],
    ['?push_mode=mqtt', { type: 'bin', msg: '01' }, 400], ['?push_mode=mqtt', { type: 'json', msg: 'x' }, 400],
    ['?push_mode=mqtt', { msg: '01' }, 400],
  ])('A7 data set%s %j fails with errcode %i', async (q, body, errcode) => {
    expect((await t.api('POST', `/api/v1/control/device/dev-meter-1/data/serial_raw/set${q}`, body)).body).toMatchObject({ result: false, errcode });
  });

  it('A7 refuses unknown streams, devices, empty pushes and commands without method', async () => {
    expect((await t.api('POST', '/api/v1/control/device/dev-meter-1/data/nope/set?push_mode=mqtt', { type: 'text', msg: 'x' })).body).toMatchObject({ result: false, errcode: 404 });
    expect((await t.api('POST', '/api/v1/control/device/nope/attributes', { a: 1 })).body).toMatchObject({ result: false, errcode: 404 });
    expect((await t.api('POST', '/api/v1/control/device/dev-meter-1/attributes', {})).body).toMatchObject({ result: false, errcode: 400 });
    expect((await t.api('PUT', '/api/v1/control/device/dev-meter-1/attributes', [1])).body).toMatchObject({ result: false, errcode: 400 });
    expect((await t.api('POST', '/api/v1/control/device/dev-meter-1/command', { params: {} })).body).toMatchObject({ result: false, errcode: 400 });
  });

  it('accepts pushes to an offline device and drops them', async () => {
    const before = t.channel!.published.length;
    expect((await t.api('POST', '/api/v1/control/device/dev-meter-2/attributes', { a: 1 })).body.result).toBe(true);
    expect(t.channel!.published.length).toBe(before);
  });

  it('B pushes and stores attributes (attr_type push), reads and PUTs cloud values', async () => {
    const push = await t.app('POST', `${B}/attributes`, { setpoint: 500 });
    expect(push.body).toEqual({ result: 1, ts: expect.any(Number) });
    expect(last().topic).toBe('attributes/push');
    expect(JSON.parse(last().payload.toString())).toEqual({ setpoint: 500 });
    expect((await t.app('GET', `${B}/attributes?keys=setpoint,voltage`)).body).toEqual({ result: 1, attributes: { setpoint: 500, voltage: 231 } });
    const before = t.channel!.published.length;
    expect((await t.app('PUT', `${B}/attributes`, { label: 'x' })).body).toEqual({ result: 1, ts: expect.any(Number) });
    expect(t.channel!.published.length).toBe(before);
    expect((await t.api('GET', '/api/v1/device/dev-meter-1/attributes_meta?keys=setpoint,label')).body.info).toMatchObject({ setpoint: { type: 'push' }, label: { type: 'cloud' } });
    expect((await t.app('GET', `${B}/attributes`)).body.attributes).toMatchObject({ setpoint: 500, label: 'x', voltage: 231 });
    expect((await t.app('GET', `${B}/attributes?keys=`)).body.attributes).toMatchObject({ setpoint: 500, label: 'x', voltage: 231 });
  });

  it('B command/send publishes and acknowledges', async () => {
    expect((await t.app('POST', `${B}/command/send`, { method: 'open', params: {}, id: 999999 })).body).toEqual({ result: 1, ts: expect.any(Number) });
    expect(last().topic).toBe('command/send/999999');
  });

  it.each([
    [{ method: 'x', params: {}, id: 1_000_000 }], [{ method: 'x', params: {} }], [{ method: 'x', params: {}, id: 1.5 }],
    [{ method: 'x', params: {}, id: -1 }], [{ params: {}, id: 1 }], [{ method: 'x', params: 3, id: 1 }],
  ])('B command/send refuses %j with result 0', async (body) => {
    const r = await t.app('POST', `${B}/command/send`, body);
    expect(r.body).toMatchObject({ result: 0, errcode: 400 });
  });

  it('B sync send returns the device reply matched by payload id', async () => {
    const pending = t.app('POST', `${B}/command/sync/send`, { method: 'read', params: { reg: 1 }, id: 7 });
    await expect.poll(() => t.channel!.published.some((p) => p.topic === 'command/send/7')).toBe(true);
    t.emu.link.onCommandReply('dev-meter-1', { method: 'read', params: { value: 12 }, id: 7 }, '1000');
    expect((await pending).body).toEqual({ result: 1, command: { method: 'read', params: { value: 12 }, id: 7 } });
  });

  it('B sync send falls back to the topic id when the payload id differs', async () => {
    const pending = t.app('POST', `${B}/command/sync/send`, { method: 'read', params: {}, id: 8 });
    await expect.poll(() => t.channel!.published.some((p) => p.topic === 'command/send/8')).toBe(true);
    t.emu.link.onCommandReply('dev-meter-1', { method: 'read', params: { ok: true }, id: 555 }, '8');
    expect((await pending).body.command).toEqual({ method: 'read', params: { ok: true }, id: 555 });
  });

  it('B sync send times out with errcode 410 (HTTP 200)', async () => {
    const r = await t.app('POST', `${B}/command/sync/send`, { method: 'read', params: {}, id: 9 });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ result: 0, message: 'Waiting for command sync reply timeout', errcode: 410 });
  });

  it('B data set defaults to push_mode mqtt', async () => {
    expect((await t.app('POST', `${B}/data/console/set`, { type: 'text', msg: 'ping' })).body).toEqual({ result: 1, ts: expect.any(Number) });
    expect(last()).toMatchObject({ topic: 'data/console/set' });
    expect(last().payload.toString()).toBe('ping');
    expect((await t.app('POST', `${B}/data/nope/set`, { type: 'text', msg: 'x' })).body).toMatchObject({ result: 0, errcode: 404 });
  });

  it('B checks the Project-Key and the device credential', async () => {
    expect((await t.app('GET', `${B}/attributes`, undefined, 'wrong')).body).toMatchObject({ result: 0, errcode: 403 });
    expect((await t.app('GET', `${B}/attributes`, undefined, '')).body).toMatchObject({ result: 0, errcode: 403, message: 'Missing Project-Key header' });
    expect((await t.app('GET', '/app/device/v1/nope/attributes')).body).toMatchObject({ result: 0, errcode: 401 });
    expect((await t.app('POST', `${B}/attributes`, {})).body).toMatchObject({ result: 0, errcode: 400 });
    expect((await t.app('GET', `${B}/nothing`)).body).toEqual({ message: 'Request invalid' });
  });

  it('certificate: known device key, auto-create by type key, and each failure', async () => {
    const known = await t.app('POST', '/device/v1/certificate', { device_key: 'meter-2' });
    expect(known.body).toEqual({ result: 1, message: 'success', device: { id: 'dev-meter-2', name: 'Meter 2', access_token: 'demo-meter-2-token', conn_type: '1' } });
    const made = await t.app('POST', '/device/v1/certificate', { device_key: 'meter-new', type_key: 'modbus-meter-type-key', customer_id: 'cus-acme' });
    expect(made.body).toMatchObject({ result: 1, device: { name: 'meter-new', conn_type: '1' } });
    const again = await t.app('POST', '/device/v1/certificate', { device_key: 'meter-new', type_key: 'modbus-meter-type-key' });
    expect(again.body.device).toEqual(made.body.device);
    expect((await t.api('GET', '/api/v1/customer/cus-acme')).body.info.count.device_count).toBe(3);
    expect((await t.app('POST', '/device/v1/certificate', { device_key: 'unknown' })).body).toMatchObject({ result: 0, errcode: 404 });
    expect((await t.app('POST', '/device/v1/certificate', { device_key: 'x', type_key: 'nope' })).body).toMatchObject({ result: 0, errcode: 404 });
    expect((await t.app('POST', '/device/v1/certificate', { device_key: 'meter-1' }, 'wrong')).body).toMatchObject({ result: 0, errcode: 403 });
    expect((await t.app('POST', '/device/v1/certificate', {})).body).toMatchObject({ result: 0, errcode: 400 });
  });

  it('certificate: 409 when the type does not allow auto-creation', async () => {
    t.emu.state.types.get('type-gateway')!.type_key = 'gw-key';
    const r = await t.app('POST', '/device/v1/certificate', { device_key: 'gw-9', type_key: 'gw-key' });
    expect(r.body).toMatchObject({ result: 0, errcode: 409 });
  });
});
