// The emulator's answers where the spec says "not shown" (docs/emulator.md), not covered elsewhere.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP, request, startTestEmulator, type TestEmulator } from './helpers.js';

const B = '/app/device/v1/demo-meter-1-token';

/** fetch without the Content-Type header the helpers always send. */
async function bare(url: string, init: RequestInit): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('emulator: documented choices where the spec is silent', () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ syncReplyTimeoutMs: 200 });
    t.channel?.online.add('dev-meter-1');
  });
  afterAll(async () => { await t.emu.close(); });

  it('checks in order: path, JSON, token, then fields', async () => {
    // Unknown path wins over a bad body and a missing token.
    expect((await request(t.base, 'POST', '/api/v1/nothing', '{bad', {})).body).toEqual({ message: 'Request invalid' });
    // Bad JSON wins over a missing token.
    const badJson = await request(t.base, 'POST', '/api/v1/device', '{bad', {});
    expect(badJson.status).toBe(404);
    expect(badJson.body).toEqual({ result: false, message: 'Invalid JSON message', errcode: 400 });
    // A missing token wins over missing fields.
    expect((await request(t.base, 'POST', '/api/v1/device', {}, {})).body).toMatchObject({ result: false, errcode: 401 });
    expect((await t.api('POST', '/api/v1/device', {})).body).toMatchObject({ result: false, errcode: 400 });
  });

  it('does not insist on Content-Type: application/json (A and B)', async () => {
    const token = await t.token();
    const a = await bare(`${t.base}/api/v1/access_token`, { method: 'POST', body: JSON.stringify(APP) });
    expect(a.body).toMatchObject({ result: true });
    const read = await bare(`${t.base}/api/v1/project`, { headers: { Authorization: `Bearer ${token}` } });
    expect(read.body).toMatchObject({ result: true, info: { id: 'prj-demo' } });
    const b = await bare(`${t.base}${B}/attributes`, { headers: { 'Project-Key': 'demo-project-key' } });
    expect(b.body).toMatchObject({ result: 1 });
  });

  it('creates a device without type and device_key: first seed type, key = id', async () => {
    const created = await t.api('POST', '/api/v1/device', { name: 'Bare' });
    const id = created.body.info.id as string;
    const d = (await t.api('GET', `/api/v1/device/${id}`)).body.info;
    expect(d).toMatchObject({ type: 'type-modbus-meter', device_key: id, groups: [], tags: {}, descr: '' });
    expect(typeof d.view_token).toBe('string');
    const cert = (await t.api('GET', `/api/v1/device/${id}/certificate`)).body.info;
    const directory = t.channel!.options!.directory;
    expect(directory.authenticate(cert.access_token, cert.project_key)).toBe(id);
    await t.api('DELETE', `/api/v1/device/${id}`);
    // A deleted device's credential no longer logs in (MQTT and TCP share this directory).
    expect(directory.authenticate(cert.access_token, cert.project_key)).toBeUndefined();
    expect((await t.app('GET', `/app/device/v1/${cert.access_token}/attributes`)).body).toMatchObject({ result: 0, errcode: 401 });
  });

  it('stores each group once, on create as on PUT groups', async () => {
    const created = await t.api('POST', '/api/v1/device', { name: 'Twice', groups: ['grp-hall-a', 'grp-hall-a'] });
    const id = created.body.info.id as string;
    expect((await t.api('GET', `/api/v1/device/${id}`)).body.info.groups).toEqual(['grp-hall-a']);
    await t.api('PUT', `/api/v1/device/${id}/groups`, { groups: ['grp-hall-b', 'grp-hall-b'] });
    expect((await t.api('GET', `/api/v1/device/${id}`)).body.info.groups).toEqual(['grp-hall-b']);
    await t.api('DELETE', `/api/v1/device/${id}`);
  });

  it('ignores unknown keys in attributes_remove and tags_remove', async () => {
    expect((await t.api('POST', '/api/v1/device/dev-meter-1/attributes_remove', { keys: ['nope'] })).body).toEqual({ result: true, info: {} });
    expect((await t.api('POST', '/api/v1/device/dev-meter-1/tags_remove', { keys: ['nope'] })).body).toEqual({ result: true, info: {} });
  });

  it('pages a customer\'s devices like the device list (default 24, at most 100)', async () => {
    const r = await t.api('GET', '/api/v1/customer/cus-acme/devices');
    expect(r.body.info).toMatchObject({ total: 2, page_total: 1 });
    expect(r.body.info.items[0]).not.toHaveProperty('view_token');
    expect((await t.api('GET', '/api/v1/customer/cus-acme/devices?page_records=1&page=2')).body.info).toMatchObject({ total: 2, page_total: 2 });
    expect((await t.api('GET', '/api/v1/customer/cus-acme/devices?page_records=101')).body).toMatchObject({ result: false, errcode: 400 });
  });

  it('answers 429 with the failure shape (errors: []) and Retry-After only when limited', async () => {
    const limited = await startTestEmulator({ rateLimit: { limit: 1, windowS: 3600 } });
    try {
      const first = await request(limited.base, 'POST', '/api/v1/access_token', APP, {});
      expect(first.headers.get('retry-after')).toBeNull();
      const second = await request(limited.base, 'POST', '/api/v1/access_token', APP, {});
      expect(second.status).toBe(429);
      expect(second.body).toEqual({ result: false, errcode: 429, message: 'Too Many Requests', errors: [] });
      expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } finally {
      await limited.emu.close();
    }
  });

  it('B command params are optional ({} is sent)', async () => {
    expect((await t.app('POST', `${B}/command/send`, { method: 'ping', id: 5 })).body).toEqual({ result: 1, ts: expect.any(Number) });
    expect(JSON.parse(t.channel!.published.at(-1)!.payload.toString())).toEqual({ method: 'ping', params: {}, id: 5 });
  });

  it('serves GET command/sync/send with the command in the query', async () => {
    const q = `method=read&id=31&params=${encodeURIComponent('{"reg":2}')}`;
    const pending = t.app('GET', `${B}/command/sync/send?${q}`);
    await expect.poll(() => t.channel!.published.some((p) => p.topic === 'command/send/31')).toBe(true);
    const sent = t.channel!.published.find((p) => p.topic === 'command/send/31')!;
    expect(JSON.parse(sent.payload.toString())).toEqual({ method: 'read', params: { reg: 2 }, id: 31 });
    t.emu.link.onCommandReply('dev-meter-1', { method: 'read', params: { value: 3 }, id: 31 }, '31');
    expect((await pending).body).toEqual({ result: 1, command: { method: 'read', params: { value: 3 }, id: 31 } });
    expect((await t.app('GET', `${B}/command/sync/send?method=read&id=32`)).body)
      .toEqual({ result: 0, message: 'Waiting for command sync reply timeout', errcode: 410 });
  });

  it.each([
    ['method=read', 'id'], ['method=read&id=1.5', 'id'], ['method=read&id=x', 'id'], ['method=read&id=1&params=%7Bx', 'params'],
    ['method=read&id=1&params=3', 'params'], ['', 'method'],
  ])('refuses GET command/sync/send?%s (field %s)', async (query, field) => {
    const r = await t.app('GET', `${B}/command/sync/send?${query}`);
    expect(r.body).toMatchObject({ result: 0, errcode: 400 });
    expect((r.body.errors as { field: string }[]).map((e) => e.field)).toContain(field);
  });
});
