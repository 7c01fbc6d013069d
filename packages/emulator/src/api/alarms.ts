// A8 alarm logs, newest first, for the project or one device.
import type { ApiContext } from '../http/context.js';
import { info, type Router } from '../http/router.js';
import { readPage } from '../http/validate.js';
import type { AlarmLogRecord } from '../state/model.js';
import { alarmView } from './views.js';

function page(ctx: ApiContext, logs: AlarmLogRecord[]) {
  const { page: n, pageRecords } = readPage(ctx.query, 100, 20);
  const from = (n - 1) * pageRecords;
  return info({ items: logs.slice(from, from + pageRecords).map((a) => alarmView(ctx.state, a)) });
}

export function alarmRoutes(r: Router<ApiContext>): void {
  r.get('/api/v1/alarm_logs', (ctx) => page(ctx, ctx.state.alarms));
  r.get('/api/v1/device/:device_id/alarm_logs', (ctx, p) => {
    const d = ctx.state.requireDevice(p.device_id);
    return page(ctx, ctx.state.alarms.filter((a) => a.device_id === d.id));
  });
}
