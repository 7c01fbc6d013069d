// Internal records -> the response shapes of docs/protocol.md §4-§5.
import type { EmulatorState } from '../state/state.js';
import type { AlarmLogRecord, CustomerRecord, DeviceRecord, DeviceTypeRecord, GroupRecord, RoleRecord } from '../state/model.js';

export function deviceView(state: EmulatorState, d: DeviceRecord, withViewToken: boolean): Record<string, unknown> {
  const type = state.types.get(d.type);
  const view: Record<string, unknown> = {
    id: d.id, name: d.name, descr: d.descr, device_key: d.device_key, tags: { ...d.tags },
    create_time: d.create_time, alarm: state.alarmState(d.id), active: { ...d.active },
    online: state.isOnline(d.id), type: d.type,
    type_info: { id: d.type, name: type?.name ?? '', conn_type: type?.conn_type ?? '', conn_protocol: type?.conn_protocol ?? '' },
    groups: [...d.groups], device_code: d.device_code,
  };
  if (withViewToken) view.view_token = d.view_token;
  return view;
}

export function typeView(state: EmulatorState, t: DeviceTypeRecord): Record<string, unknown> {
  let count = 0;
  for (const d of state.devices.values()) if (d.type === t.id) count += 1;
  return {
    id: t.id, name: t.name, descr: t.descr, tags: { ...t.tags }, create_time: t.create_time,
    device_count: count, conn_protocol: t.conn_protocol, conn_type: t.conn_type,
  };
}

/** Top-level nodes carry every field; nested children only id, name, descr, tags (as the spec allows). */
export function groupTree(state: EmulatorState): Record<string, unknown>[] {
  const nested = (g: GroupRecord): Record<string, unknown> => ({
    id: g.id, name: g.name, descr: g.descr, tags: { ...g.tags },
    children: g.children.flatMap((c) => { const child = state.groups.get(c); return child ? [nested(child)] : []; }),
  });
  return [...state.groups.values()].filter((g) => g.parent === undefined).map((g) => {
    let count = 0;
    for (const d of state.devices.values()) if (d.groups.includes(g.id)) count += 1;
    return { ...nested(g), create_time: g.create_time, device_count: count };
  });
}

export function customerView(state: EmulatorState, c: CustomerRecord, withRoles: boolean): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: c.id, account: c.account, name: c.name, descr: c.descr, email: c.email, mobile: c.mobile,
    tags: { ...c.tags }, locale: c.locale, create_time: c.create_time,
    count: { device_count: c.devices.filter((d) => state.devices.has(d)).length },
  };
  if (withRoles) {
    view.roles = c.roles.flatMap((r) => { const role = state.roles.get(r); return role ? [{ id: role.id, name: role.name }] : []; });
  }
  return view;
}

export function roleView(state: EmulatorState, r: RoleRecord): Record<string, unknown> {
  let count = 0;
  for (const c of state.customers.values()) if (c.roles.includes(r.id)) count += 1;
  return {
    id: r.id, name: r.name, descr: r.descr, allow_operate_device: r.allow_operate_device,
    allow_alarm_msg_maintain: r.allow_alarm_msg_maintain, allow_add_device: r.allow_add_device,
    create_time: r.create_time, customer_count: count,
  };
}

export function alarmView(state: EmulatorState, a: AlarmLogRecord): Record<string, unknown> {
  return {
    id: a.id, device_id: a.device_id, alarm_status: a.alarm_status, alarm_level: a.alarm_level,
    alarm_info: { ...a.alarm_info }, create_time: a.create_time, notify_logs: [...a.notify_logs],
    device: { id: a.device_id, name: state.devices.get(a.device_id)?.name ?? '' },
  };
}

/** data_type of a value without a model (the spec leaves the vocabulary open). */
export function inferDataType(value: unknown): string {
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'string') return 'string';
  return 'json';
}
