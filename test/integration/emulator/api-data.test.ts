// Interface A6: attributes, metadata, series windows and paging, aggregates with known answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../helpers/manual-clock.js';
import { startTestEmulator, type TestEmulator } from './helpers.js';

const NOW = Date.UTC(2026, 5, 15, 12, 0, 0);
const MIN = 60_000;
const DAY = 86_400_000;

// temp: 10 points in the last hour (values 1..10, one per 5 min inside 11:10..11:55), one 40 days ago.
const history = [
  ...Array.from({ length: 10 }, (_, i) => `      - { name: temp, value: ${i + 1}, ts: ${NOW - 50 * MIN + i * 5 * MIN} }`),
  `      - { name: temp, value: 99, ts: ${NOW - 40 * DAY} }`,
  `      - { name: mode, value: auto, ts: ${NOW - 10 * MIN} }`,
].join('\n');

const SEED = `
project: { id: p, name: P, project_key: pk }
api_apps: [{ app_id: demo-app, access_key: demo-access-key, secret_key: demo-secret-key }]
device_types:
  - id: t
    name: t
    attributes: [{ identifier: temp, name: Temperature, data_type: float, data_options: { unit: C } }]
devices:
  - id: d1
    name: D1
    type: t
    device_key: k1
    access_token: tok1
    history:
${history}
`;

describe('emulator interface A: device data', () => {
  const clock = new ManualClock(NOW);
  let t: TestEmulator;
  beforeAll(async () => { t = await startTestEmulator({ clock, seedText: SEED }); });
  afterAll(async () => { await t.emu.close(); });

  it('lists attributes with model when defined', async () => {
    const r = await t.api('GET', '/api/v1/device/d1/attributes');
    expect(r.body.info).toEqual([
      { identifier: 'temp', value: 10, attr_type: 'report', data_type: 'float', ts: NOW - 5 * MIN, model: { name: 'Temperature', attr_type: 'report', data_type: 'float', data_options: { unit: 'C' } } },
      { identifier: 'mode', value: 'auto', attr_type: 'report', data_type: 'string', ts: NOW - 10 * MIN },
    ]);
  });

  it('reads raw values and metadata, all or by keys', async () => {
    expect((await t.api('GET', '/api/v1/device/d1/attributes_raw')).body.info).toEqual({ temp: 10, mode: 'auto' });
    expect((await t.api('GET', '/api/v1/device/d1/attributes_raw?keys=mode,nope')).body.info).toEqual({ mode: 'auto' });
    expect((await t.api('GET', '/api/v1/device/d1/attributes_meta?keys=temp')).body.info).toEqual({ temp: { type: 'report', data_type: 'float', ts: NOW - 5 * MIN } });
    // An empty `keys=` reads like an omitted one (only `groups` gives empty its own meaning).
    expect((await t.api('GET', '/api/v1/device/d1/attributes_raw?keys=')).body.info).toEqual({ temp: 10, mode: 'auto' });
    expect(Object.keys((await t.api('GET', '/api/v1/device/d1/attributes_meta?keys=')).body.info)).toEqual(['temp', 'mode']);
  });

  it('reads the series of the last 30 days by default, newest first, paged', async () => {
    const r = await t.api('GET', '/api/v1/device/d1/attribute/temp/series');
    expect(r.body.info).toHaveLength(10);
    expect(r.body.info[0]).toEqual({ timestamp: new Date(NOW - 5 * MIN).toISOString(), ts: NOW - 5 * MIN, name: 'temp', value: 10, type: 'report' });
    const p2 = await t.api('GET', '/api/v1/device/d1/attribute/temp/series?page=2&page_records=4');
    expect(p2.body.info.map((p: { value: number }) => p.value)).toEqual([6, 5, 4, 3]);
    const both = await t.api('GET', `/api/v1/device/d1/attribute/temp/series?start_time=${NOW - 41 * DAY}&end_time=${NOW - 39 * DAY}`);
    expect(both.body.info.map((p: { value: number }) => p.value)).toEqual([99]);
    // Only one bound given: the default 30 days applies.
    const one = await t.api('GET', `/api/v1/device/d1/attribute/temp/series?start_time=${NOW - 41 * DAY}&page_records=500`);
    expect(one.body.info).toHaveLength(10);
  });

  it.each(['page_records=501', 'page_records=0', 'start_time=abc'])('refuses series with %s', async (q) => {
    expect((await t.api('GET', `/api/v1/device/d1/attribute/temp/series?${q}`)).body).toMatchObject({ result: false, errcode: 400 });
  });

  it('refuses the series of an unknown attribute', async () => {
    expect((await t.api('GET', '/api/v1/device/d1/attribute/nope/series')).body).toMatchObject({ result: false, errcode: 404 });
  });

  it.each([
    ['avg', 5.5], ['max', 10], ['min', 1], ['median', 5.5], ['first', 1], ['last', 10], ['count', 10], ['spread', 9], ['sum', 55],
  ])('aggregates %s over the default last hour / 1h window', async (fn, value) => {
    const r = await t.api('GET', `/api/v1/device/d1/attribute/temp/aggregate?function=${fn}`);
    expect(r.body.info).toEqual({
      time_range: { start: NOW - 3_600_000, end: NOW }, window_duration: 3600, function: fn,
      data: [{ timestamp: new Date(NOW - 3_600_000).toISOString(), ts: NOW - 3_600_000, value }],
    });
  });

  it('defaults to avg over last_1h in 1h windows', async () => {
    const r = await t.api('GET', '/api/v1/device/d1/attribute/temp/aggregate');
    expect(r.body.info).toMatchObject({ window_duration: 3600, function: 'avg', data: [{ value: 5.5 }] });
  });

  it('splits into windows and reads custom ranges', async () => {
    const r = await t.api('GET', '/api/v1/device/d1/attribute/temp/aggregate?window=30m&function=count');
    expect(r.body.info.data.map((p: { value: number }) => p.value)).toEqual([4, 6]);
    const custom = await t.api('GET', `/api/v1/device/d1/attribute/temp/aggregate?time_range=custom&start_time=${NOW - 41 * DAY}&end_time=${NOW}&window=1d&function=max`);
    expect(custom.body.info.time_range).toEqual({ start: NOW - 41 * DAY, end: NOW });
    expect(custom.body.info.data.map((p: { value: number }) => p.value)).toEqual([99, 10]);
    const month = await t.api('GET', '/api/v1/device/d1/attribute/temp/aggregate?time_range=last_60d&window=1mo&function=sum');
    expect(month.body.info.data).toEqual([
      { timestamp: '2026-05-01T00:00:00.000Z', ts: Date.UTC(2026, 4, 1), value: 99 },
      { timestamp: '2026-06-01T00:00:00.000Z', ts: Date.UTC(2026, 5, 1), value: 55 },
    ]);
  });

  it.each([
    ['time_range=last_2h', 'time_range'], ['window=2h', 'window'], ['function=mean', 'function'],
    ['time_range=custom', 'start_time,end_time'], [`time_range=custom&start_time=${NOW}&end_time=${NOW - 1}`, 'start_time'],
  ])('refuses aggregate with %s', async (q, field) => {
    const r = await t.api('GET', `/api/v1/device/d1/attribute/temp/aggregate?${q}`);
    expect(r.body).toMatchObject({ result: false, errcode: 400 });
    expect(r.body.errors[0].field).toBe(field);
  });

  it('refuses aggregates of non-numeric and unknown attributes', async () => {
    expect((await t.api('GET', '/api/v1/device/d1/attribute/mode/aggregate')).body).toMatchObject({ result: false, errcode: 400, message: 'Attribute is not numeric: mode' });
    expect((await t.api('GET', '/api/v1/device/d1/attribute/nope/aggregate')).body).toMatchObject({ result: false, errcode: 404 });
  });

  it('removes attributes (history stays)', async () => {
    expect((await t.api('POST', '/api/v1/device/d1/attributes_remove', { keys: [] })).body).toMatchObject({ result: false, errcode: 400 });
    expect((await t.api('POST', '/api/v1/device/d1/attributes_remove', {})).body).toMatchObject({ result: false, errcode: 400 });
    expect((await t.api('POST', '/api/v1/device/d1/attributes_remove', { keys: ['mode'] })).body).toEqual({ result: true, info: {} });
    expect((await t.api('GET', '/api/v1/device/d1/attributes_raw')).body.info).toEqual({ temp: 10 });
    expect((await t.api('GET', '/api/v1/device/d1/attribute/mode/series')).body.info).toHaveLength(1);
  });

  it('records device reports as attr_type report with history', async () => {
    clock.advance(1000);
    t.emu.link.onReport('d1', { temp: 21.5, flag: true });
    const attrs = await t.api('GET', '/api/v1/device/d1/attributes_meta?keys=temp,flag');
    expect(attrs.body.info).toEqual({ temp: { type: 'report', data_type: 'float', ts: NOW + 1000 }, flag: { type: 'report', data_type: 'bool', ts: NOW + 1000 } });
    expect((await t.api('GET', '/api/v1/device/d1/attribute/temp/series?page_records=1')).body.info[0]).toMatchObject({ value: 21.5, type: 'report' });
    expect((await t.api('GET', '/api/v1/device/d1')).body.info.active.attributes).toBe(NOW + 1000);
    clock.set(NOW);
  });
});
