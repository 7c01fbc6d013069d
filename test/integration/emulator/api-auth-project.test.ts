// Interface A: tokens (A1), project / statistics / admin (A2), types and groups (A3), generic errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../helpers/manual-clock.js';
import { APP, request, startTestEmulator, type TestEmulator } from './helpers.js';

const T0 = Date.UTC(2026, 5, 15, 12, 0, 0);

describe('emulator interface A: tokens, project, catalog', () => {
  const clock = new ManualClock(T0);
  let t: TestEmulator;
  beforeAll(async () => { t = await startTestEmulator({ clock }); });
  afterAll(async () => { await t.emu.close(); });

  it('exchanges app keys for a 1-day token', async () => {
    const r = await request(t.base, 'POST', '/api/v1/access_token', APP, {});
    expect(r.status).toBe(200);
    expect(r.body.result).toBe(true);
    expect(r.body.info.expires_in).toBe(86400);
    expect(typeof r.body.info.access_token).toBe('string');
  });

  it.each([
    ['missing field', { app_id: 'demo-app', access_key: 'demo-access-key' }, 400, 'secret_key'],
    ['wrong secret', { ...APP, secret_key: 'nope' }, 403, undefined],
    ['unknown app', { ...APP, app_id: 'other' }, 403, undefined],
    ['number instead of string', { ...APP, access_key: 5 }, 400, 'access_key'],
  ])('refuses the exchange on %s', async (_name, body, errcode, field) => {
    const r = await request(t.base, 'POST', '/api/v1/access_token', body, {});
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ result: false, errcode });
    expect(typeof r.body.message).toBe('string');
    expect(Array.isArray(r.body.errors)).toBe(true);
    if (field) expect(r.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('expires an exchange token after 86400 s (clock-driven)', async () => {
    const tok = (await request(t.base, 'POST', '/api/v1/access_token', APP, {})).body.info.access_token;
    clock.advance(86_399_000);
    expect((await t.api('GET', '/api/v1/project', undefined, tok)).body.result).toBe(true);
    clock.advance(1000);
    const r = await t.api('GET', '/api/v1/project', undefined, tok);
    expect(r.body).toMatchObject({ result: false, errcode: 401, message: 'Access token expired' });
    // Issuing a new token drops expired records; the old token must still read as expired.
    await request(t.base, 'POST', '/api/v1/access_token', APP, {});
    expect((await t.api('GET', '/api/v1/project', undefined, tok)).body).toMatchObject({ errcode: 401, message: 'Access token expired' });
    clock.set(T0);
  });

  it('admin login gives a 7-day token that alone may read /admin', async () => {
    const login = await request(t.base, 'POST', '/api/v1/admin_login', { app_id: 'demo-app', account: 'admin', password: 'admin-password' }, {});
    expect(login.body.info.expires_in).toBe(604800);
    const admin = await t.api('GET', '/api/v1/admin', undefined, login.body.info.access_token);
    expect(admin.body).toEqual({ result: true, info: { id: 'adm-1', account: 'admin', name: 'Site administrator', email: 'admin@example.com', tags: { team: 'ops' } } });
    const viaExchange = await t.api('GET', '/api/v1/admin');
    expect(viaExchange.body).toMatchObject({ result: false, errcode: 403 });
    clock.advance(604_800_000);
    expect((await t.api('GET', '/api/v1/admin', undefined, login.body.info.access_token)).body).toMatchObject({ result: false, errcode: 401 });
    clock.set(T0);
  });

  it('refuses admin login with a wrong password', async () => {
    const r = await request(t.base, 'POST', '/api/v1/admin_login', { app_id: 'demo-app', account: 'admin', password: 'x' }, {});
    expect(r.body).toMatchObject({ result: false, errcode: 403 });
  });

  it.each([
    ['no header', {}],
    ['unknown token', { Authorization: 'Bearer nope' }],
    ['not a bearer', { Authorization: 'Basic abc' }],
  ])('answers 200 result false errcode 401 with %s', async (_n, headers) => {
    const r = await request(t.base, 'GET', '/api/v1/project', undefined, headers);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ result: false, errcode: 401 });
  });

  it('reads the project', async () => {
    const r = await t.api('GET', '/api/v1/project');
    expect(r.body).toEqual({ result: true, info: { id: 'prj-demo', name: 'Demo plant', descr: 'Local device cloud for rehearsing a fieldgate site', tags: { site: 'demo' } } });
  });

  it('counts devices by status, with group filters', async () => {
    const all = await t.api('GET', '/api/v1/devices_stat');
    expect(all.body.info).toEqual({
      device_total: 5, online_device_total: 0, offline_device_total: 5, active_device_total: 1, inactive_device_total: 4, alarm_device_total: 1,
    });
    t.emu.link.onConnected('dev-meter-3', 'mqtt');
    const hallB = await t.api('GET', '/api/v1/devices_stat?groups=grp-hall-b');
    expect(hallB.body.info).toMatchObject({ device_total: 3, online_device_total: 1, active_device_total: 1 });
    expect((await t.api('GET', '/api/v1/devices_stat?groups=grp-plant')).body.info.device_total).toBe(0);
    expect((await t.api('GET', '/api/v1/devices_stat?groups=grp-plant&include_sub_groups=1')).body.info.device_total).toBe(5);
    t.emu.link.onDisconnected('dev-meter-3', 'mqtt');
    expect((await t.api('GET', '/api/v1/devices_stat')).body.info.online_device_total).toBe(0);
    expect((await t.api('GET', '/api/v1/devices_stat?groups=nope')).body).toMatchObject({ result: false, errcode: 404 });
  });

  it('counts devices by alarm level', async () => {
    const r = await t.api('GET', '/api/v1/devices_alarm_stat');
    expect(r.body.info).toEqual({ device_total: 5, alarm_1_total: 0, alarm_2_total: 1, alarm_3_total: 0, normal_total: 4 });
    const hallA = await t.api('GET', '/api/v1/devices_alarm_stat?groups=grp-hall-a');
    expect(hallA.body.info).toEqual({ device_total: 2, alarm_1_total: 0, alarm_2_total: 1, alarm_3_total: 0, normal_total: 1 });
  });

  it('lists device types with device counts', async () => {
    const r = await t.api('GET', '/api/v1/device_types');
    expect(r.body.info.items.map((x: { id: string; device_count: number; conn_type: string }) => [x.id, x.device_count, x.conn_type])).toEqual([
      ['type-modbus-meter', 3, '1'], ['type-gateway', 1, '3'], ['type-modbus-sub-meter', 1, '1'],
    ]);
    expect(r.body.info.items[0]).toMatchObject({ id: 'type-modbus-meter', name: 'modbus-meter', device_count: 3, conn_protocol: 'mqtt', conn_type: '1' });
    expect(r.body.info.items[0]).toHaveProperty('create_time');
  });

  it('lists a type\'s extended-info definitions and refuses an unknown type', async () => {
    const r = await t.api('GET', '/api/v1/device_type/type-modbus-meter/extend_infos');
    expect(r.body.info.items.map((i: { id: string }) => i.id)).toEqual(['location', 'install_date', 'panel']);
    expect(r.body.info.items[0]).toMatchObject({ info_type: 'location', is_standard: true, enabled: true });
    expect((await t.api('GET', '/api/v1/device_type/nope/extend_infos')).body).toMatchObject({ result: false, errcode: 404 });
  });

  it('returns the groups tree, nested children with the short shape', async () => {
    const r = await t.api('GET', '/api/v1/device_groups_tree');
    const [plant] = r.body.info.items;
    expect(plant).toMatchObject({ id: 'grp-plant', name: 'Plant', device_count: 0 });
    expect(plant.children).toEqual([
      { id: 'grp-hall-a', name: 'Hall A', descr: '', tags: {}, children: [] },
      { id: 'grp-hall-b', name: 'Hall B', descr: '', tags: {}, children: [] },
    ]);
  });

  it('answers unknown paths and wrong methods with 404 Request invalid', async () => {
    for (const [method, path] of [['GET', '/api/v1/nothing'], ['DELETE', '/api/v1/project'], ['GET', '/elsewhere'], ['GET', '/app/device/v1/x/y'],
      ['GET', '/api/v1/project//'], ['GET', '/api/v1//project'], ['GET', '/api/v1/device//certificate'], ['GET', '/api/v2/project'],
      ['GET', '/app/device/v1//attributes']]) {
      const r = await t.api(method, path);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ message: 'Request invalid' });
    }
  });

  it('answers a body that is not JSON with 404 Invalid JSON message', async () => {
    const r = await t.api('POST', '/api/v1/device', '{"name": ');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ result: false, message: 'Invalid JSON message', errcode: 400 });
    const b = await t.app('POST', '/app/device/v1/demo-meter-1-token/attributes', 'nope');
    expect(b.status).toBe(404);
    expect(b.body).toEqual({ result: 0, message: 'Invalid JSON message', errcode: 400 });
  });

  it('refuses a body that is JSON but not an object', async () => {
    const r = await t.api('POST', '/api/v1/device', [1, 2]);
    expect(r.body).toMatchObject({ result: false, errcode: 400 });
  });
});
