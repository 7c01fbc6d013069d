// A7 device communication: attribute push, cloud-private attributes, commands, custom data.
import type { ApiContext } from '../http/context.js';
import { info, type Router } from '../http/router.js';
import { requireAttributeObject } from '../http/validate.js';
import { pushStreamData, readCommand, readPushMode } from './device-ops.js';

export function controlRoutes(r: Router<ApiContext>): void {
  // Pushes only: A7 does not store the values (B's push does).
  r.post('/api/v1/control/device/:device_id/attributes', async (ctx, p) => {
    const d = ctx.state.requireDevice(p.device_id);
    await ctx.link.pushAttributes(d.id, requireAttributeObject(ctx.body));
    return info({});
  });

  r.put('/api/v1/control/device/:device_id/attributes', (ctx, p) => {
    const d = ctx.state.requireDevice(p.device_id);
    ctx.link.updateCloudAttributes(d, requireAttributeObject(ctx.body));
    return info({});
  });

  r.post('/api/v1/control/device/:device_id/command', async (ctx, p) => {
    const d = ctx.state.requireDevice(p.device_id);
    await ctx.link.sendCommand(d.id, readCommand(ctx.body, false));
    return info({});
  });

  r.post('/api/v1/control/device/:device_id/data/:identifier/set', async (ctx, p) => {
    const d = ctx.state.requireDevice(p.device_id);
    const mode = readPushMode(ctx.query, undefined);
    await pushStreamData(ctx.state, ctx.link, d, p.identifier, mode, ctx.body);
    return info({});
  });
}
