// Interface A: devices (A4) and extended information (A5), with their error paths.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, type TestEmulator } from './helpers.js';

describe('emulator interface A: devices and extended info', () => {
  let t: TestEmulator;
  beforeAll(async () => { t = await startTestEmulator(); });
  afterAll(async () => { await t.emu.close(); });

  it('lists devices with defaults and pagination', async () => {
    const r = await t.api('GET', '/api/v1/devices');
    expect(r.body.info.total).toBe(5);
    expect(r.body.info.page_total).toBe(1);
    const first = r.body.info.items[0];
    expect(first).toMatchObject({
      id: 'dev-meter-1', name: 'Meter 1', device_key: 'meter-1', online: false, type: 'type-modbus-meter',
      type_info: { id: 'type-modbus-meter', name: 'modbus-meter', conn_type: '1', conn_protocol: 'mqtt' }, groups: ['grp-hall-a'],
    });
    expect(first).not.toHaveProperty('view_token');
    const p2 = await t.api('GET', '/api/v1/devices?page=2&page_records=2');
    expect(p2.body.info).toMatchObject({ total: 5, page_total: 3 });
    expect(p2.body.info.items.map((d: { id: string }) => d.id)).toEqual(['dev-meter-3', 'dev-fieldgate']);
  });

  it.each(['page_records=0', 'page_records=101', 'page=0', 'page=x'])('refuses %s', async (q) => {
    const r = await t.api('GET', `/api/v1/devices?${q}`);
    expect(r.body).toMatchObject({ result: false, errcode: 400 });
    expect(r.body.errors[0].field).toBe(q.split('=')[0]);
  });

  it('filters by type and groups (empty groups = ungrouped)', async () => {
    expect((await t.api('GET', '/api/v1/devices?type=type-gateway')).body.info.items.map((d: { id: string }) => d.id)).toEqual(['dev-fieldgate']);
    expect((await t.api('GET', '/api/v1/devices?groups=grp-hall-a')).body.info.total).toBe(2);
    expect((await t.api('GET', '/api/v1/devices?groups=grp-plant&include_sub_groups=1')).body.info.total).toBe(5);
    expect((await t.api('GET', '/api/v1/devices?groups=')).body.info.total).toBe(0);
    expect((await t.api('GET', '/api/v1/devices?type=nope')).body).toMatchObject({ result: false, errcode: 404 });
  });

  it('reads one device with view_token, its certificate and customers', async () => {
    const d = await t.api('GET', '/api/v1/device/dev-meter-2');
    expect(d.body.info).toMatchObject({ id: 'dev-meter-2', alarm: { alarm_level: 2, alarm_status: 1 } });
    expect(typeof d.body.info.view_token).toBe('string');
    const cert = await t.api('GET', '/api/v1/device/dev-meter-1/certificate');
    expect(cert.body.info).toEqual({ id: 'dev-meter-1', name: 'Meter 1', access_token: 'demo-meter-1-token', project_key: 'demo-project-key' });
    const customers = await t.api('GET', '/api/v1/device/dev-meter-1/customers');
    expect(customers.body.info.items.map((c: { id: string }) => c.id)).toEqual(['cus-acme']);
    expect(customers.body.info.items[0].roles).toEqual([{ id: 'role-operator', name: 'Operator' }]);
  });

  it.each([
    ['GET', '/api/v1/device/nope'], ['GET', '/api/v1/device/nope/certificate'], ['GET', '/api/v1/device/nope/customers'],
    ['PUT', '/api/v1/device/nope/info'], ['PUT', '/api/v1/device/nope/tags'], ['POST', '/api/v1/device/nope/tags_remove'],
    ['PUT', '/api/v1/device/nope/groups'], ['DELETE', '/api/v1/device/nope'], ['GET', '/api/v1/device/nope/extend_infos'],
  ])('%s %s answers errcode 404 for an unknown device', async (method, path) => {
    const r = await t.api(method, path, method === 'GET' || method === 'DELETE' ? undefined : { name: 'x', tags: {}, keys: ['a'], groups: [] });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ result: false, errcode: 404 });
  });

  it('creates, edits and deletes a device', async () => {
    const created = await t.api('POST', '/api/v1/device', { name: 'Pump', descr: 'P1', groups: ['grp-hall-b'], tags: { a: '1' }, device_key: 'pump-1' });
    expect(created.body.result).toBe(true);
    const id = created.body.info.id as string;
    expect(created.body.info.name).toBe('Pump');
    expect((await t.api('PUT', `/api/v1/device/${id}/info`, { name: 'Pump 1', descr: 'new' })).body).toEqual({ result: true, info: {} });
    expect((await t.api('PUT', `/api/v1/device/${id}/tags`, { tags: { b: '2', a: 'x' } })).body.result).toBe(true);
    expect((await t.api('POST', `/api/v1/device/${id}/tags_remove`, { keys: ['b'] })).body.result).toBe(true);
    expect((await t.api('PUT', `/api/v1/device/${id}/groups`, { groups: [] })).body.result).toBe(true);
    const d = (await t.api('GET', `/api/v1/device/${id}`)).body.info;
    expect(d).toMatchObject({ name: 'Pump 1', descr: 'new', tags: { a: 'x' }, groups: [], device_key: 'pump-1', type: 'type-modbus-meter' });
    expect((await t.api('GET', '/api/v1/devices?groups=')).body.info.total).toBe(1);
    expect((await t.api('DELETE', `/api/v1/device/${id}`)).body).toEqual({ result: true, info: {} });
    expect((await t.api('GET', `/api/v1/device/${id}`)).body).toMatchObject({ result: false, errcode: 404 });
  });

  it.each([
    ['no name', { descr: 'x' }, 400, 'name'],
    ['6 groups', { name: 'x', groups: ['a', 'b', 'c', 'd', 'e', 'f'] }, 400, 'groups'],
    ['unknown group', { name: 'x', groups: ['nope'] }, 404, 'groups'],
    ['unknown type', { name: 'x', type: 'nope' }, 404, 'type'],
    ['tags not strings', { name: 'x', tags: { a: 1 } }, 400, 'tags.a'],
    ['taken device_key', { name: 'x', device_key: 'meter-1' }, 409, 'device_key'],
  ])('refuses device create with %s', async (_n, body, errcode, field) => {
    const r = await t.api('POST', '/api/v1/device', body);
    expect(r.body).toMatchObject({ result: false, errcode });
    expect(r.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it.each([
    ['PUT', 'info', {}, 400], ['PUT', 'info', { name: null }, 400], ['PUT', 'info', { device_key: 'meter-2' }, 409], ['PUT', 'tags', {}, 400],
    ['PUT', 'tags', { tags: 'x' }, 400], ['POST', 'tags_remove', { keys: 'a' }, 400], ['PUT', 'groups', {}, 400],
    ['PUT', 'groups', { groups: ['a', 'b', 'c', 'd', 'e', 'f'] }, 400], ['PUT', 'groups', { groups: ['nope'] }, 404],
  ])('%s device/<id>/%s %j fails with errcode %i', async (method, what, body, errcode) => {
    const r = await t.api(method, `/api/v1/device/dev-meter-1/${what}`, body);
    expect(r.body).toMatchObject({ result: false, errcode });
  });

  it('reads and writes extended information', async () => {
    const r = await t.api('GET', '/api/v1/device/dev-meter-1/extend_infos');
    const byId = Object.fromEntries(r.body.info.items.map((i: { id: string; value: unknown }) => [i.id, i.value]));
    expect(byId).toEqual({ location: { lat: 48.137, lng: 11.575 }, install_date: '2024-03-01', panel: 'A1' });
    const std = await t.api('POST', '/api/v1/device/dev-meter-1/standard_infos', { info_type: 'location', value: { alt: 520 } });
    expect(std.body).toEqual({ result: true, info: { location: { alt: 520 } } });
    const ext = await t.api('POST', '/api/v1/device/dev-meter-1/extend_infos', { infos: { panel: 'B2' } });
    expect(ext.body).toEqual({ result: true, info: { panel: 'B2' } });
    const again = await t.api('GET', '/api/v1/device/dev-meter-1/extend_infos');
    const after = Object.fromEntries(again.body.info.items.map((i: { id: string; value: unknown }) => [i.id, i.value]));
    expect(after).toMatchObject({ location: { lat: 48.137, lng: 11.575, alt: 520 }, panel: 'B2' });
  });

  it.each([
    ['standard_infos', {}, 400], ['standard_infos', { info_type: 'location', value: { a: [1] } }, 400],
    ['standard_infos', { info_type: 'weather', value: { a: 1 } }, 404], ['extend_infos', {}, 400],
    ['extend_infos', { infos: { nope: 1 } }, 404], ['extend_infos', { infos: { location: 'x' } }, 404],
  ])('POST %s %j fails with errcode %i', async (what, body, errcode) => {
    const r = await t.api('POST', `/api/v1/device/dev-meter-1/${what}`, body);
    expect(r.body).toMatchObject({ result: false, errcode });
  });
});
