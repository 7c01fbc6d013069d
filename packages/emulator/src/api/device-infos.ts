// A5 device extended information: standard infos and the type's custom definitions.
import type { ApiContext } from '../http/context.js';
import { notFound } from '../http/errors.js';
import { info, type Router } from '../http/router.js';
import { BodyReader } from '../http/validate.js';

export function deviceInfoRoutes(r: Router<ApiContext>): void {
  r.get('/api/v1/device/:device_id/extend_infos', (ctx, p) => {
    const d = ctx.state.requireDevice(p.device_id);
    const defs = ctx.state.types.get(d.type)?.extend_infos ?? [];
    const items = defs.map((def) => ({
      id: def.id, info_type: def.info_type, name: def.name, descr: def.descr,
      value: def.is_standard ? { ...(d.standard_infos[def.info_type] ?? {}) } : (d.extend_infos[def.id] ?? ''),
      options: { ...def.options }, create_time: def.create_time, update_time: d.info_update_times[def.id] ?? def.update_time,
      is_standard: def.is_standard,
    }));
    return info({ items });
  });

  r.post('/api/v1/device/:device_id/standard_infos', (ctx, p) => {
    const d = ctx.state.requireDevice(p.device_id);
    const body = new BodyReader(ctx.body);
    const infoType = body.string('info_type', { required: true }) ?? '';
    const value = body.primitives('value', { required: true }) ?? {};
    body.done();
    const defs = (ctx.state.types.get(d.type)?.extend_infos ?? []).filter((def) => def.is_standard && def.info_type === infoType);
    if (defs.length === 0) throw notFound('Standard info type', 'info_type', infoType);
    d.standard_infos[infoType] = { ...(d.standard_infos[infoType] ?? {}), ...value };
    const now = ctx.state.now();
    for (const def of defs) d.info_update_times[def.id] = now;
    return info({ [infoType]: value });
  });

  r.post('/api/v1/device/:device_id/extend_infos', (ctx, p) => {
    const d = ctx.state.requireDevice(p.device_id);
    const body = new BodyReader(ctx.body);
    const infos = body.primitives('infos', { required: true }) ?? {};
    body.done();
    const custom = new Set((ctx.state.types.get(d.type)?.extend_infos ?? []).filter((def) => !def.is_standard).map((def) => def.id));
    const unknown = Object.keys(infos).find((id) => !custom.has(id));
    if (unknown !== undefined) throw notFound('Custom info definition', `infos.${unknown}`, unknown);
    Object.assign(d.extend_infos, infos);
    const now = ctx.state.now();
    for (const id of Object.keys(infos)) d.info_update_times[id] = now;
    return info({ ...infos });
  });
}
