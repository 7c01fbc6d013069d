// A9 customers and roles: list, read, devices, create, info/pwd/tags changes, delete, auth.
import type { ApiContext } from '../http/context.js';
import { ErrCode } from '../http/errors.js';
import { info, ok, type Router } from '../http/router.js';
import { BodyReader, paginate, readPage } from '../http/validate.js';
import { customerView, deviceView, roleView } from './views.js';

export const MAX_CUSTOMER_ROLES = 10;

export function customerRoutes(r: Router<ApiContext>): void {
  r.get('/api/v1/customers', (ctx) => info({ items: [...ctx.state.customers.values()].map((c) => customerView(ctx.state, c, true)) }));

  r.get('/api/v1/customer_roles', (ctx) => info({ items: [...ctx.state.roles.values()].map((role) => roleView(ctx.state, role)) }));

  r.get('/api/v1/customer/:customer_id', (ctx, p) => info(customerView(ctx.state, ctx.state.requireCustomer(p.customer_id), false)));

  r.get('/api/v1/customer/:customer_id/devices', (ctx, p) => {
    const c = ctx.state.requireCustomer(p.customer_id);
    const devices = c.devices.flatMap((id) => { const d = ctx.state.devices.get(id); return d ? [d] : []; });
    const result = paginate(devices, readPage(ctx.query, 100, 24));
    return info({ ...result, items: result.items.map((d) => deviceView(ctx.state, d, false)) });
  });

  r.post('/api/v1/customer', (ctx) => {
    const body = new BodyReader(ctx.body);
    const name = body.string('name', { required: true }) ?? '';
    const account = body.string('account', { required: true }) ?? '';
    const password = body.string('password', { required: true }) ?? '';
    const descr = body.string('descr');
    const email = body.string('email');
    const mobile = body.string('mobile');
    const roles = body.stringArray('roles', { max: MAX_CUSTOMER_ROLES });
    const tags = body.tags('tags');
    body.done();
    ctx.state.requireRoles(roles ?? [], 'roles');
    ctx.state.checkAccountFree(account);
    const id = ctx.state.newId('cus');
    ctx.state.customers.set(id, {
      id, account, password, name, descr: descr ?? '', email: email ?? '', mobile: mobile ?? '', tags: tags ?? {},
      locale: 'en_US', create_time: ctx.state.now(), roles: [...new Set(roles ?? [])], devices: [],
    });
    return info({ id, name });
  });

  r.put('/api/v1/customer/:customer_id/info', (ctx, p) => {
    const c = ctx.state.requireCustomer(p.customer_id);
    const body = new BodyReader(ctx.body);
    const name = body.string('name');
    const descr = body.string('descr');
    const email = body.string('email');
    const mobile = body.string('mobile');
    const roles = body.stringArray('roles', { max: MAX_CUSTOMER_ROLES });
    if (name === '') body.fail('name', 'must not be empty');
    if (!['name', 'descr', 'email', 'mobile', 'roles'].some((f) => body.has(f))) body.fail('(body)', 'needs at least one of name, descr, email, mobile, roles');
    body.done();
    if (roles) ctx.state.requireRoles(roles, 'roles');
    if (name !== undefined) c.name = name;
    if (descr !== undefined) c.descr = descr;
    if (email !== undefined) c.email = email;
    if (mobile !== undefined) c.mobile = mobile;
    if (roles !== undefined) c.roles = [...new Set(roles)];
    return info({});
  });

  r.put('/api/v1/customer/:customer_id/pwd', (ctx, p) => {
    const c = ctx.state.requireCustomer(p.customer_id);
    const body = new BodyReader(ctx.body);
    const password = body.string('password', { required: true });
    body.done();
    c.password = password ?? c.password;
    return info({});
  });

  r.put('/api/v1/customer/:customer_id/tags', (ctx, p) => {
    const c = ctx.state.requireCustomer(p.customer_id);
    const body = new BodyReader(ctx.body);
    const tags = body.tags('tags', { required: true });
    body.done();
    Object.assign(c.tags, tags);
    return info({});
  });

  r.delete('/api/v1/customer/:customer_id', (ctx, p) => {
    const c = ctx.state.requireCustomer(p.customer_id);
    ctx.state.customers.delete(c.id);
    return info({});
  });

  r.post('/api/v1/customer_auth', (ctx) => {
    const body = new BodyReader(ctx.body);
    const account = body.string('account', { required: true });
    const password = body.string('password', { required: true });
    body.done();
    const c = [...ctx.state.customers.values()].find((x) => x.account === account);
    // Documented shape for wrong credentials: no `errors` field.
    if (!c || c.password !== password) return ok({ result: false, errcode: ErrCode.wrongCredentials, message: 'Account or password incorrect' });
    return info({ id: c.id, name: c.name });
  });
}
