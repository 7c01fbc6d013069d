// A1 token operations and A2 project / statistics / admin.
import type { ApiContext } from '../http/context.js';
import { ApiError, ErrCode } from '../http/errors.js';
import { info, type Router } from '../http/router.js';
import { ADMIN_TOKEN_TTL_S, EXCHANGE_TOKEN_TTL_S } from '../http/tokens.js';
import { BodyReader, readFlag, readList } from '../http/validate.js';
import type { DeviceRecord } from '../state/model.js';

function filteredDevices(ctx: ApiContext): DeviceRecord[] {
  const groups = readList(ctx.query, 'groups');
  if (groups) ctx.state.requireGroups(groups, 'groups');
  // An empty `groups` here means "no filter" (only the device list gives it the ungrouped meaning).
  return ctx.state.devicesInGroups(groups && groups.length > 0 ? groups : undefined, readFlag(ctx.query, 'include_sub_groups'));
}

export function authRoutes(r: Router<ApiContext>): void {
  r.add('POST', '/api/v1/access_token', (ctx) => {
    const body = new BodyReader(ctx.body);
    const appId = body.string('app_id', { required: true });
    const accessKey = body.string('access_key', { required: true });
    const secretKey = body.string('secret_key', { required: true });
    body.done();
    const app = ctx.state.apiApps.find((a) => a.app_id === appId);
    if (!app || app.access_key !== accessKey || app.secret_key !== secretKey) {
      throw new ApiError(ErrCode.forbidden, 'Invalid app_id, access_key or secret_key');
    }
    const token = ctx.tokens.issue('exchange', app.app_id);
    return info({ access_token: token.token, expires_in: EXCHANGE_TOKEN_TTL_S });
  }, { open: true });

  r.add('POST', '/api/v1/admin_login', (ctx) => {
    const body = new BodyReader(ctx.body);
    const appId = body.string('app_id', { required: true });
    const account = body.string('account', { required: true });
    const password = body.string('password', { required: true });
    body.done();
    const app = ctx.state.apiApps.find((a) => a.app_id === appId);
    const admin = ctx.state.admins.find((a) => a.account === account && a.password === password);
    if (!app || !admin) throw new ApiError(ErrCode.forbidden, 'Invalid app_id, account or password');
    const token = ctx.tokens.issue('admin', app.app_id, admin.id);
    return info({ access_token: token.token, expires_in: ADMIN_TOKEN_TTL_S });
  }, { open: true });

  r.get('/api/v1/project', (ctx) => {
    const p = ctx.state.project;
    return info({ id: p.id, name: p.name, descr: p.descr, tags: { ...p.tags } });
  });

  r.get('/api/v1/devices_stat', (ctx) => {
    const devices = filteredDevices(ctx);
    const online = devices.filter((d) => ctx.state.isOnline(d.id)).length;
    const active = devices.filter((d) => ctx.state.isActive(d)).length;
    const alarm = devices.filter((d) => ctx.state.alarmState(d.id).alarm_level > 0).length;
    return info({
      device_total: devices.length, online_device_total: online, offline_device_total: devices.length - online,
      active_device_total: active, inactive_device_total: devices.length - active, alarm_device_total: alarm,
    });
  });

  r.get('/api/v1/devices_alarm_stat', (ctx) => {
    const devices = filteredDevices(ctx);
    const levels = devices.map((d) => ctx.state.alarmState(d.id).alarm_level);
    const count = (level: number) => levels.filter((l) => l === level).length;
    return info({
      device_total: devices.length, alarm_1_total: count(1), alarm_2_total: count(2), alarm_3_total: count(3),
      normal_total: count(0),
    });
  });

  r.get('/api/v1/admin', (ctx) => {
    const admin = ctx.token?.kind === 'admin' ? ctx.state.admins.find((a) => a.id === ctx.token?.adminId) : undefined;
    if (!admin) throw new ApiError(ErrCode.forbidden, 'Only available with an administrator login token');
    return info({ id: admin.id, account: admin.account, name: admin.name, email: admin.email, tags: { ...admin.tags } });
  });
}
