// A3 device types, their extended-info definitions, and the groups tree.
import type { ApiContext } from '../http/context.js';
import { info, type Router } from '../http/router.js';
import { groupTree, typeView } from './views.js';

export function catalogRoutes(r: Router<ApiContext>): void {
  r.get('/api/v1/device_types', (ctx) => info({ items: [...ctx.state.types.values()].map((t) => typeView(ctx.state, t)) }));

  r.get('/api/v1/device_type/:device_type_id/extend_infos', (ctx, p) => {
    const type = ctx.state.requireType(p.device_type_id);
    return info({ items: type.extend_infos.map((d) => ({ ...d, options: { ...d.options } })) });
  });

  r.get('/api/v1/device_groups_tree', (ctx) => info({ items: groupTree(ctx.state) }));
}
