// Interface A: customers and roles (A9), alarm logs (A8).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, type TestEmulator } from './helpers.js';

describe('emulator interface A: customers and alarms', () => {
  let t: TestEmulator;
  beforeAll(async () => { t = await startTestEmulator(); });
  afterAll(async () => { await t.emu.close(); });

  it('lists customers with roles and roles with counts', async () => {
    const list = await t.api('GET', '/api/v1/customers');
    expect(list.body.info.items).toHaveLength(1);
    expect(list.body.info.items[0]).toMatchObject({ id: 'cus-acme', account: 'acme', roles: [{ id: 'role-operator', name: 'Operator' }], count: { device_count: 2 } });
    expect(list.body.info.items[0]).not.toHaveProperty('password');
    const roles = await t.api('GET', '/api/v1/customer_roles');
    expect(roles.body.info.items[0]).toMatchObject({ id: 'role-operator', allow_operate_device: true, allow_alarm_msg_maintain: true, allow_add_device: false, customer_count: 1 });
  });

  it('reads one customer without roles, and its devices paged', async () => {
    const one = await t.api('GET', '/api/v1/customer/cus-acme');
    expect(one.body.info).toMatchObject({ id: 'cus-acme', name: 'ACME Facilities', email: 'ops@acme.example', locale: 'en_US' });
    expect(one.body.info).not.toHaveProperty('roles');
    const devices = await t.api('GET', '/api/v1/customer/cus-acme/devices');
    expect(devices.body.info).toMatchObject({ total: 2, page_total: 1 });
    expect(devices.body.info.items.map((d: { id: string }) => d.id)).toEqual(['dev-meter-1', 'dev-meter-2']);
    expect((await t.api('GET', '/api/v1/customer/cus-acme/devices?page=2')).body.info.items).toEqual([]);
  });

  it('creates, edits, re-tags, re-passwords, authenticates and deletes a customer', async () => {
    const created = await t.api('POST', '/api/v1/customer', { name: 'Beta', account: 'beta', password: 'pw1', email: 'b@x', roles: ['role-viewer'], tags: { tier: 'gold' } });
    expect(created.body.result).toBe(true);
    const id = created.body.info.id as string;
    expect(created.body.info.name).toBe('Beta');
    expect((await t.api('PUT', `/api/v1/customer/${id}/info`, { mobile: '+49', roles: ['role-operator', 'role-viewer'] })).body).toEqual({ result: true, info: {} });
    expect((await t.api('PUT', `/api/v1/customer/${id}/tags`, { tags: { region: 'eu' } })).body.result).toBe(true);
    const read = (await t.api('GET', `/api/v1/customer/${id}`)).body.info;
    expect(read).toMatchObject({ mobile: '+49', tags: { tier: 'gold', region: 'eu' } });
    expect((await t.api('POST', '/api/v1/customer_auth', { account: 'beta', password: 'pw1' })).body).toEqual({ result: true, info: { id, name: 'Beta' } });
    expect((await t.api('PUT', `/api/v1/customer/${id}/pwd`, { password: 'pw2' })).body.result).toBe(true);
    const wrong = await t.api('POST', '/api/v1/customer_auth', { account: 'beta', password: 'pw1' });
    expect(wrong.status).toBe(200);
    expect(wrong.body).toEqual({ result: false, errcode: 401, message: 'Account or password incorrect' });
    expect((await t.api('POST', '/api/v1/customer_auth', { account: 'nobody', password: 'x' })).body).not.toHaveProperty('errors');
    expect((await t.api('DELETE', `/api/v1/customer/${id}`)).body).toEqual({ result: true, info: {} });
    expect((await t.api('GET', `/api/v1/customer/${id}`)).body).toMatchObject({ result: false, errcode: 404 });
  });

  const elevenRoles = Array.from({ length: 11 }, () => 'role-viewer');
  it.each([
    ['missing account and password', { name: 'x' }, 400],
    ['11 roles', { name: 'x', account: 'x', password: 'x', roles: elevenRoles }, 400],
    ['unknown role', { name: 'x', account: 'x', password: 'x', roles: ['nope'] }, 404],
    ['taken account', { name: 'x', account: 'acme', password: 'x' }, 409],
    ['email not a string', { name: 'x', account: 'y', password: 'x', email: 3 }, 400],
  ])('refuses customer create with %s', async (_n, body, errcode) => {
    expect((await t.api('POST', '/api/v1/customer', body)).body).toMatchObject({ result: false, errcode });
  });

  it.each([
    ['PUT', 'info', {}, 400], ['PUT', 'info', { email: null }, 400], ['PUT', 'info', { roles: elevenRoles }, 400], ['PUT', 'info', { roles: ['nope'] }, 404],
    ['PUT', 'pwd', {}, 400], ['PUT', 'tags', { tags: { a: 1 } }, 400],
  ])('%s customer/<id>/%s %j fails with errcode %i', async (method, what, body, errcode) => {
    expect((await t.api(method, `/api/v1/customer/cus-acme/${what}`, body)).body).toMatchObject({ result: false, errcode });
  });

  it.each([
    ['GET', ''], ['GET', '/devices'], ['PUT', '/info'], ['PUT', '/pwd'], ['PUT', '/tags'], ['DELETE', ''],
  ])('%s customer/nope%s answers errcode 404', async (method, suffix) => {
    const body = method === 'PUT' ? { name: 'x', password: 'x', tags: {} } : undefined;
    expect((await t.api(method, `/api/v1/customer/nope${suffix}`, body)).body).toMatchObject({ result: false, errcode: 404 });
  });

  it('refuses customer_auth without fields', async () => {
    expect((await t.api('POST', '/api/v1/customer_auth', {})).body).toMatchObject({ result: false, errcode: 400 });
  });

  it('lists alarm logs for the project and per device, paged', async () => {
    const all = await t.api('GET', '/api/v1/alarm_logs');
    expect(all.body.info.items).toHaveLength(1);
    expect(all.body.info.items[0]).toMatchObject({
      id: 'alm-1', device_id: 'dev-meter-2', alarm_status: 1, alarm_level: 2,
      alarm_info: { rule_id: 'overvoltage' }, notify_logs: [], device: { id: 'dev-meter-2', name: 'Meter 2' },
    });
    expect((await t.api('GET', '/api/v1/device/dev-meter-1/alarm_logs')).body.info.items).toEqual([]);
    expect((await t.api('GET', '/api/v1/device/dev-meter-2/alarm_logs?page=2')).body.info.items).toEqual([]);
    expect((await t.api('GET', '/api/v1/alarm_logs?page_records=101')).body).toMatchObject({ result: false, errcode: 400 });
    expect((await t.api('GET', '/api/v1/device/nope/alarm_logs')).body).toMatchObject({ result: false, errcode: 404 });
  });
});
