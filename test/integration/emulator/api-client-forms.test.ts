// What clients nobody here wrote send: fractional ms, empty device keys, trailing slashes, `true`
// flags, repeated list parameters, BOMs, other Content-Types, unknown fields. Each looser form
// the spec allows is accepted (docs/emulator.md lists the choices); hostile variants are refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../helpers/manual-clock.js';
import { parseSeed, SeedError } from '../../../packages/emulator/src/state/seed.js';
import { APP, PROJECT_KEY, request, startTestEmulator, type TestEmulator } from './helpers.js';

const NOW = Date.UTC(2026, 9, 20, 8, 27, 5, 165);
const DEFS_TIME = Date.UTC(2025, 0, 1);

const SEED = `
project: { id: p, name: P, project_key: ${PROJECT_KEY} }
api_apps: [{ app_id: ${APP.app_id}, access_key: ${APP.access_key}, secret_key: ${APP.secret_key} }]
device_types:
  - id: t
    name: t
    create_time: ${DEFS_TIME}
    data_streams: [{ identifier: console, type: text }]
    extend_infos:
      - { id: location, info_type: location, name: Location, is_standard: true }
      - { id: panel, info_type: string, name: Panel }
      - { id: floor, info_type: string, name: Floor }
groups:
  - id: g1
    name: G1
    children: [{ id: g2, name: G2 }]
devices:
  - { id: d1, name: D1, type: t, device_key: k1, access_token: tok1, groups: [g1], device_code: LABEL-1 }
  - { id: d2, name: D2, type: t, device_key: k2, access_token: tok2, groups: [g2] }
  - { id: d3, name: D3, type: t, device_key: k3, access_token: tok3 }
`;

describe('emulator: the forms real clients send', () => {
  const clock = new ManualClock(NOW);
  let t: TestEmulator;
  beforeAll(async () => { t = await startTestEmulator({ clock, seedText: SEED }); });
  afterAll(async () => { await t.emu.close(); });

  describe('time parameters in decimal milliseconds', () => {
    beforeAll(async () => {
      clock.set(NOW);
      await t.app('PUT', '/app/device/v1/tok1/attributes', { temp: 21 });
      clock.set(NOW + 60_000);
      await t.app('PUT', '/app/device/v1/tok1/attributes', { temp: 22 });
    });

    it('series: a Python time.time()*1000 range is truncated, so the point at its start is read', async () => {
      const r = await t.api('GET', `/api/v1/device/d1/attribute/temp/series?start_time=${NOW}.6912&end_time=${NOW + 59_999}.9999`);
      expect(r.body).toMatchObject({ result: true, info: [{ ts: NOW, value: 21 }] });
      expect(r.body.info).toHaveLength(1);
    });

    it('aggregate custom range: truncated the same way', async () => {
      const r = await t.api('GET', `/api/v1/device/d1/attribute/temp/aggregate?time_range=custom&start_time=${NOW}.5&end_time=${NOW + 60_000}.5&window=1h&function=count`);
      expect(r.body).toMatchObject({ result: true, info: { time_range: { start: NOW, end: NOW + 60_000 }, data: [{ value: 2 }] } });
    });

    it.each(['-1', '-0.5', 'NaN', 'Infinity', '1e12', '0x10', '1.2.3', '99999999999999999', `${'9'.repeat(500)}`])(
      'series start_time=%s answers 400 naming the field', async (value) => {
        const r = await t.api('GET', `/api/v1/device/d1/attribute/temp/series?start_time=${encodeURIComponent(value)}&end_time=${NOW}`);
        expect(r.body).toMatchObject({ result: false, errcode: 400, errors: [{ field: 'start_time' }] });
      },
    );

    it('a duplicated time parameter: the first one counts', async () => {
      const r = await t.api('GET', `/api/v1/device/d1/attribute/temp/series?start_time=${NOW + 1}&start_time=${NOW}&end_time=${NOW + 60_000}`);
      expect(r.body.info).toEqual([expect.objectContaining({ ts: NOW + 60_000 })]);
    });
  });

  describe('device_key and device_code on create', () => {
    it.each([['empty', ''], ['null', null], ['absent', undefined]])('an %s device_key means none: the id is the key', async (_name, key) => {
      const r = await t.api('POST', '/api/v1/device', { name: `csv-${_name}`, device_key: key });
      expect(r.body.result).toBe(true);
      const created = await t.api('GET', `/api/v1/device/${r.body.info.id as string}`);
      expect(created.body.info.device_key).toBe(r.body.info.id);
    });

    it('two empty keys in a row create two devices', async () => {
      const a = await t.api('POST', '/api/v1/device', { name: 'row-1', device_key: '' });
      const b = await t.api('POST', '/api/v1/device', { name: 'row-2', device_key: '' });
      expect([a.body.result, b.body.result]).toEqual([true, true]);
      expect(a.body.info.id).not.toBe(b.body.info.id);
    });

    it('certificate endpoint: an empty customer_id or type_key counts as absent', async () => {
      const cert = (body: unknown) => request(t.base, 'POST', '/device/v1/certificate', body, { 'Project-Key': PROJECT_KEY });
      expect((await cert({ device_key: 'k1', type_key: '', customer_id: '' })).body).toMatchObject({ result: 1, device: { id: 'd1' } });
      expect((await cert({ device_key: 'unknown-key', type_key: '' })).body).toMatchObject({ result: 0, errcode: 404, message: 'Unknown device key: unknown-key' });
      expect((await cert({ device_key: '' })).body).toMatchObject({ result: 0, errcode: 400 });
    });

    it('an empty device_key on PUT info is still refused (it would erase the key)', async () => {
      const r = await t.api('PUT', '/api/v1/device/d3/info', { device_key: '' });
      expect(r.body).toMatchObject({ result: false, errcode: 400, errors: [{ field: 'device_key' }] });
    });

    it('every device has a non-empty, unique device_code; a seeded one is kept', async () => {
      const list = await t.api('GET', '/api/v1/devices?page_records=100');
      const codes = (list.body.info.items as { id: string; device_code: string }[]).map((d) => d.device_code);
      expect(codes.every((c) => c.length > 0)).toBe(true);
      expect(new Set(codes).size).toBe(codes.length);
      expect((await t.api('GET', '/api/v1/device/d1')).body.info.device_code).toBe('LABEL-1');
    });

    it('codes are stable: the same seed gives the same codes', async () => {
      const again = parseSeed(SEED, NOW);
      const other = await startTestEmulator({ clock, seedText: SEED });
      try {
        expect(other.emu.state.devices.get('d2')?.device_code).toBe(t.emu.state.devices.get('d2')?.device_code);
        expect(again.devices.find((d) => d.id === 'd1')?.device_code).toBe('LABEL-1');
      } finally {
        await other.emu.close();
      }
    });

    it('a seed naming one device_code twice is refused', () => {
      const dup = SEED.replace('device_key: k2, access_token: tok2,', 'device_key: k2, access_token: tok2, device_code: LABEL-1,');
      expect(() => parseSeed(dup, NOW)).toThrow(SeedError);
      expect(() => parseSeed(dup, NOW)).toThrow(/devices\[\]\.device_code: duplicate value "LABEL-1"/);
    });
  });

  describe('A5 update_time follows value writes', () => {
    it('standard_infos and extend_infos each move only their item', async () => {
      const itemsAt = async () => Object.fromEntries(((await t.api('GET', '/api/v1/device/d2/extend_infos')).body.info.items as { id: string; update_time: number; create_time: number }[])
        .map((i) => [i.id, [i.create_time, i.update_time]]));
      expect(await itemsAt()).toEqual({ location: [DEFS_TIME, DEFS_TIME], panel: [DEFS_TIME, DEFS_TIME], floor: [DEFS_TIME, DEFS_TIME] });
      clock.set(NOW + 5000);
      await t.api('POST', '/api/v1/device/d2/standard_infos', { info_type: 'location', value: { lat: 1 } });
      clock.set(NOW + 9000);
      await t.api('POST', '/api/v1/device/d2/extend_infos', { infos: { panel: 'B2' } });
      expect(await itemsAt()).toEqual({ location: [DEFS_TIME, NOW + 5000], panel: [DEFS_TIME, NOW + 9000], floor: [DEFS_TIME, DEFS_TIME] });
      // a refused write moves nothing
      clock.set(NOW + 20_000);
      await t.api('POST', '/api/v1/device/d2/extend_infos', { infos: { panel: 'C3', nope: 1 } });
      expect((await itemsAt()).panel).toEqual([DEFS_TIME, NOW + 9000]);
    });
  });

  describe('paths, flags, lists and bodies', () => {
    it('a trailing slash names the same resource on A and B; a doubled one does not', async () => {
      expect((await t.api('GET', '/api/v1/project/')).body).toMatchObject({ result: true, info: { id: 'p' } });
      expect((await t.app('GET', '/app/device/v1/tok1/attributes/')).body).toMatchObject({ result: 1 });
      expect((await t.api('GET', '/api/v1/project//')).status).toBe(404);
    });

    it.each([['1', 2], ['true', 2], ['TRUE', 2], ['0', 1], ['false', 1], ['yes', 1], ['', 1]])(
      'include_sub_groups=%s selects %i device(s) under g1', async (flag, count) => {
        const r = await t.api('GET', `/api/v1/devices?groups=g1&include_sub_groups=${flag}`);
        expect(r.body.info.total).toBe(count);
        const stat = await t.api('GET', `/api/v1/devices_stat?groups=g1&include_sub_groups=${flag}`);
        expect(stat.body.info.device_total).toBe(count);
      },
    );

    it('repeated keys= add up; page=2.0 is page 2', async () => {
      await t.app('PUT', '/app/device/v1/tok3/attributes', { a: 1, b: 2, c: 3 });
      expect((await t.api('GET', '/api/v1/device/d3/attributes_raw?keys=a&keys=b')).body.info).toEqual({ a: 1, b: 2 });
      expect((await t.app('GET', '/app/device/v1/tok3/attributes?keys=a&keys=c')).body.attributes).toEqual({ a: 1, c: 3 });
      const p1 = await t.api('GET', '/api/v1/devices?page_records=1&page=2.0');
      expect(p1.body.info.items[0].id).toBe('d2');
    });

    it.each([['MQTT'], ['Mqtt'], ['TCP']])('push_mode=%s is accepted', async (mode) => {
      const r = await t.api('POST', `/api/v1/control/device/d1/data/console/set?push_mode=${mode}`, { type: 'text', msg: 'hi' });
      expect(r.body).toEqual({ result: true, info: {} });
    });

    it.each([['push_mode=', 'is required'], ['push_mode=udp', 'must be mqtt or tcp']])('A7 %s is refused', async (query, message) => {
      const r = await t.api('POST', `/api/v1/control/device/d1/data/console/set?${query}`, { type: 'text', msg: 'hi' });
      expect(r.body).toMatchObject({ result: false, errcode: 400, errors: [{ field: 'push_mode', message: expect.stringContaining(message) }] });
    });

    it.each([
      ['application/json; charset=utf-8'], ['application/json;charset=UTF-8'], ['text/plain'], ['application/x-www-form-urlencoded'], [''],
    ])('a JSON body is read whatever the Content-Type (%j)', async (type) => {
      const res = await fetch(`${t.base}/app/device/v1/tok3/attributes`, {
        method: 'PUT', headers: { 'Content-Type': type, 'Project-Key': PROJECT_KEY }, body: '{"ct":1}',
      });
      expect(await res.json()).toMatchObject({ result: 1 });
    });

    it('a UTF-8 BOM before the JSON body is ignored (PowerShell, .NET writers)', async () => {
      const r = await request(t.base, 'POST', '/api/v1/access_token', `\uFEFF${JSON.stringify(APP)}`, {});
      expect(r.body).toMatchObject({ result: true, info: { expires_in: 86400 } });
    });

    it('unknown body fields are ignored', async () => {
      const r = await t.api('POST', '/api/v1/device', { name: 'extra', device_key: 'extra-key', colour: 'blue', nested: { a: [1] } });
      expect(r.body.result).toBe(true);
      const token = await request(t.base, 'POST', '/api/v1/access_token', { ...APP, grant_type: 'client_credentials' }, {});
      expect(token.body.result).toBe(true);
    });

    it('the Bearer scheme is case-insensitive (RFC 7235)', async () => {
      const token = await t.token();
      for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
        const r = await request(t.base, 'GET', '/api/v1/project', undefined, { Authorization: `${scheme} ${token}` });
        expect(r.body.result).toBe(true);
      }
    });

    it('numbers as strings in a body stay refused where the spec types a number (command id)', async () => {
      expect((await t.app('POST', '/app/device/v1/tok1/command/send', { method: 'm', params: {}, id: '12' })).body)
        .toMatchObject({ result: 0, errcode: 400, errors: [{ field: 'id', message: 'must be a number' }] });
      expect((await t.api('POST', '/api/v1/control/device/d1/command', { method: 'm', id: '12' })).body)
        .toMatchObject({ result: false, errcode: 400, errors: [{ field: 'id' }] });
      expect((await t.api('POST', '/api/v1/device', { name: 'num-tags', tags: { floor: 2 } })).body)
        .toMatchObject({ result: false, errcode: 400, errors: [{ field: 'tags.floor' }] });
    });

    it('duplicated JSON keys: the last one wins, as JSON.parse does', async () => {
      await t.app('PUT', '/app/device/v1/tok3/attributes', '{"dup":1,"dup":2}');
      expect((await t.app('GET', '/app/device/v1/tok3/attributes?keys=dup')).body.attributes).toEqual({ dup: 2 });
    });
  });
});
