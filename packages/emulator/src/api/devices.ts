// A4 devices: list, read, certificate, customers, info/tags/groups changes, delete, create.
import type { ApiContext } from '../http/context.js';
import { info, type Router } from '../http/router.js';
import { BodyReader, paginate, readFlag, readList, readPage } from '../http/validate.js';
import { customerView, deviceView } from './views.js';

export const MAX_DEVICE_GROUPS = 5;

export function deviceRoutes(r: Router<ApiContext>): void {
  r.get('/api/v1/devices', (ctx) => {
    const page = readPage(ctx.query, 100, 24);
    const groups = readList(ctx.query, 'groups');
    if (groups) ctx.state.requireGroups(groups, 'groups');
    const type = ctx.query.get('type');
    if (type) ctx.state.requireType(type, 'type');
    const devices = ctx.state.devicesInGroups(groups, readFlag(ctx.query, 'include_sub_groups'))
      .filter((d) => !type || d.type === type);
    const result = paginate(devices, page);
    return info({ ...result, items: result.items.map((d) => deviceView(ctx.state, d, false)) });
  });

  r.get('/api/v1/device/:device_id', (ctx, p) => info(deviceView(ctx.state, ctx.state.requireDevice(p.device_id), true)));

  r.get('/api/v1/device/:device_id/certificate', (ctx, p) => {
    const d = ctx.state.requireDevice(p.device_id);
    return info({ id: d.id, name: d.name, access_token: d.access_token, project_key: ctx.state.project.project_key });
  });

  r.get('/api/v1/device/:device_id/customers', (ctx, p) => {
    const d = ctx.state.requireDevice(p.device_id);
    const items = [...ctx.state.customers.values()].filter((c) => c.devices.includes(d.id));
    return info({ items: items.map((c) => customerView(ctx.state, c, true)) });
  });

  r.put('/api/v1/device/:device_id/info', (ctx, p) => {
    const d = ctx.state.requireDevice(p.device_id);
    const body = new BodyReader(ctx.body);
    const name = body.string('name');
    const descr = body.string('descr');
    const deviceKey = body.string('device_key');
    if (name === '') body.fail('name', 'must not be empty');
    if (deviceKey === '') body.fail('device_key', 'must not be empty');
    if (!body.has('name') && !body.has('descr') && !body.has('device_key')) body.fail('(body)', 'needs at least one of name, descr, device_key');
    body.done();
    if (deviceKey !== undefined) ctx.state.checkDeviceKeyFree(deviceKey, d.id);
    if (name !== undefined) d.name = name;
    if (descr !== undefined) d.descr = descr;
    if (deviceKey !== undefined) d.device_key = deviceKey;
    return info({});
  });

  r.put('/api/v1/device/:device_id/tags', (ctx, p) => {
    const d = ctx.state.requireDevice(p.device_id);
    const body = new BodyReader(ctx.body);
    const tags = body.tags('tags', { required: true });
    body.done();
    Object.assign(d.tags, tags);
    return info({});
  });

  r.post('/api/v1/device/:device_id/tags_remove', (ctx, p) => {
    const d = ctx.state.requireDevice(p.device_id);
    const body = new BodyReader(ctx.body);
    const keys = body.stringArray('keys', { required: true });
    body.done();
    for (const key of keys ?? []) delete d.tags[key];
    return info({});
  });

  r.put('/api/v1/device/:device_id/groups', (ctx, p) => {
    const d = ctx.state.requireDevice(p.device_id);
    const body = new BodyReader(ctx.body);
    const groups = body.stringArray('groups', { required: true, max: MAX_DEVICE_GROUPS });
    body.done();
    ctx.state.requireGroups(groups ?? [], 'groups');
    d.groups = [...new Set(groups)];
    return info({});
  });

  r.delete('/api/v1/device/:device_id', (ctx, p) => {
    ctx.state.deleteDevice(p.device_id);
    return info({});
  });

  r.post('/api/v1/device', (ctx) => {
    const body = new BodyReader(ctx.body);
    const input = {
      name: body.string('name', { required: true }) ?? '',
      descr: body.string('descr'),
      type: body.string('type'),
      groups: body.stringArray('groups', { max: MAX_DEVICE_GROUPS }),
      tags: body.tags('tags'),
      // An empty key (a CSV import's empty column) means "none": the device id is used.
      device_key: body.string('device_key') || undefined,
    };
    if (input.type === '') body.fail('type', 'must not be empty');
    body.done();
    const device = ctx.state.createDevice(input);
    return info({ id: device.id, name: device.name });
  });
}
