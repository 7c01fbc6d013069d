// Every route of interfaces A and B, one module per resource family.
import { alarmRoutes } from '../api/alarms.js';
import { authRoutes } from '../api/auth.js';
import { catalogRoutes } from '../api/catalog.js';
import { controlRoutes } from '../api/control.js';
import { customerRoutes } from '../api/customers.js';
import { deviceDataRoutes } from '../api/device-data.js';
import { deviceInfoRoutes } from '../api/device-infos.js';
import { deviceRoutes } from '../api/devices.js';
import { certificateRoutes } from '../app/certificate.js';
import { deviceAccessRoutes } from '../app/device-access.js';
import type { ApiContext, RequestContext } from './context.js';
import { Router } from './router.js';

export function buildApiRouter(): Router<ApiContext> {
  const r = new Router<ApiContext>();
  for (const add of [authRoutes, catalogRoutes, deviceRoutes, deviceInfoRoutes, deviceDataRoutes, controlRoutes, alarmRoutes, customerRoutes]) add(r);
  return r;
}

export function buildAppRouter(): Router<RequestContext> {
  const r = new Router<RequestContext>();
  deviceAccessRoutes(r);
  certificateRoutes(r);
  return r;
}
