// POST /device/v1/certificate: a device credential by device key, auto-creating by type key.
import type { RequestContext } from '../http/context.js';
import { ApiError, ErrCode } from '../http/errors.js';
import { ok, type Router } from '../http/router.js';
import { BodyReader } from '../http/validate.js';
import { requireProjectKey } from './device-access.js';

export function certificateRoutes(r: Router<RequestContext>): void {
  r.post('/device/v1/certificate', (ctx) => {
    requireProjectKey(ctx.state, ctx);
    const body = new BodyReader(ctx.body);
    const deviceKey = body.string('device_key', { required: true }) ?? '';
    // Optional keys left empty by a form or CSV mean "not given", as device_key does on create.
    const typeKey = body.string('type_key') || undefined;
    const customerId = body.string('customer_id') || undefined;
    body.done();
    let device = ctx.state.deviceByKey(deviceKey);
    if (!device) {
      if (typeKey === undefined) throw new ApiError(ErrCode.notFound, `Unknown device key: ${deviceKey}`);
      const type = ctx.state.typeByKey(typeKey);
      if (!type) throw new ApiError(ErrCode.notFound, `Unknown type key: ${typeKey}`);
      if (!type.allow_auto_create) throw new ApiError(ErrCode.conflict, `Device type ${type.name} does not allow auto-creation`);
      const customer = customerId === undefined ? undefined : ctx.state.customers.get(customerId);
      if (customerId !== undefined && !customer) throw new ApiError(ErrCode.notFound, `Unknown customer: ${customerId}`);
      device = ctx.state.createDevice({ name: deviceKey, type: type.id, device_key: deviceKey });
      customer?.devices.push(device.id);
    }
    const type = ctx.state.types.get(device.type);
    return ok({
      result: 1, message: 'success',
      device: { id: device.id, name: device.name, access_token: device.access_token, conn_type: type?.conn_type ?? '' },
    });
  });
}
