// Interface B: one device, reached by its own credential in the path; numeric result 0/1.
import type { RequestContext } from '../http/context.js';
import { ApiError, ErrCode, invalidFields } from '../http/errors.js';
import { ok, type Router } from '../http/router.js';
import { parseBoundedJson, type JsonLimits } from '../json-limits.js';
import { readKeys, requireAttributeObject } from '../http/validate.js';
import { pushStreamData, readCommand, readPushMode } from '../api/device-ops.js';
import type { DeviceRecord } from '../state/model.js';
import type { EmulatorState } from '../state/state.js';

export const SYNC_TIMEOUT_MESSAGE = 'Waiting for command sync reply timeout';

export function requireProjectKey(state: EmulatorState, ctx: RequestContext): void {
  const key = ctx.headers['project-key'];
  if (typeof key !== 'string' || key === '') {
    throw new ApiError(ErrCode.forbidden, 'Missing Project-Key header', [{ field: 'Project-Key', message: 'is required' }]);
  }
  if (key !== state.project.project_key) {
    throw new ApiError(ErrCode.forbidden, 'Invalid Project-Key', [{ field: 'Project-Key', message: 'does not match the project' }]);
  }
}

function requireDevice(ctx: RequestContext, accessToken: string): DeviceRecord {
  requireProjectKey(ctx.state, ctx);
  const device = ctx.state.deviceByToken(accessToken);
  if (!device) throw new ApiError(ErrCode.invalidToken, 'Invalid device access token', [{ field: 'access_token', message: 'unknown device credential' }]);
  return device;
}

/** Most clients cannot send a GET body: a GET sync send may carry `?method=&params=<JSON>&id=`. */
function commandFromQuery(query: URLSearchParams, limits: JsonLimits): Record<string, unknown> {
  const out: Record<string, unknown> = { method: query.get('method') ?? undefined };
  const id = query.get('id');
  if (id !== null) out.id = /^-?\d+(\.\d+)?$/.test(id) ? Number(id) : id;
  const params = query.get('params');
  if (params !== null) {
    const parsed = parseBoundedJson(params, Buffer.byteLength(params), limits);
    if (!parsed.ok) throw invalidFields([{ field: 'params', message: parsed.problem === 'syntax' ? 'must be a JSON object' : parsed.message }]);
    out.params = parsed.value;
  }
  return out;
}

const BASE = '/app/device/v1/:access_token';

export function deviceAccessRoutes(r: Router<RequestContext>): void {
  r.post(`${BASE}/attributes`, async (ctx, p) => {
    const d = requireDevice(ctx, p.access_token);
    const values = requireAttributeObject(ctx.body);
    const ts = ctx.state.setAttributes(d, values, 'push');
    await ctx.link.pushAttributes(d.id, values);
    return ok({ result: 1, ts });
  });

  r.get(`${BASE}/attributes`, (ctx, p) => {
    const d = requireDevice(ctx, p.access_token);
    return ok({ result: 1, attributes: ctx.state.attributeValues(d, readKeys(ctx.query)) });
  });

  r.put(`${BASE}/attributes`, (ctx, p) => {
    const d = requireDevice(ctx, p.access_token);
    const ts = ctx.link.updateCloudAttributes(d, requireAttributeObject(ctx.body));
    return ok({ result: 1, ts });
  });

  r.post(`${BASE}/command/send`, async (ctx, p) => {
    const d = requireDevice(ctx, p.access_token);
    await ctx.link.sendCommand(d.id, readCommand(ctx.body, true));
    return ok({ result: 1, ts: ctx.state.now() });
  });

  // The spec's overview lists GET, its description POST: both are served.
  const syncSend = async (ctx: RequestContext, p: Record<string, string>) => {
    const d = requireDevice(ctx, p.access_token);
    const body = ctx.body === undefined && ctx.query.has('method') ? commandFromQuery(ctx.query, ctx.jsonLimits) : ctx.body;
    const reply = await ctx.link.sendCommandSync(d.id, readCommand(body, true));
    if (!reply) return ok({ result: 0, message: SYNC_TIMEOUT_MESSAGE, errcode: ErrCode.syncTimeout });
    return ok({ result: 1, command: { method: reply.method, params: reply.params, id: reply.id } });
  };
  r.post(`${BASE}/command/sync/send`, syncSend);
  r.get(`${BASE}/command/sync/send`, syncSend);

  r.post(`${BASE}/data/:identifier/set`, async (ctx, p) => {
    const d = requireDevice(ctx, p.access_token);
    const mode = readPushMode(ctx.query, 'mqtt');
    await pushStreamData(ctx.state, ctx.link, d, p.identifier, mode, ctx.body);
    return ok({ result: 1, ts: ctx.state.now() });
  });
}
