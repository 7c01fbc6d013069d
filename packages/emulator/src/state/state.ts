// The emulator's in-memory cloud: collections, look-ups and the rules that keep them consistent.
import type { CloudClock } from '../clock.js';
import { ApiError, ErrCode, conflict, notFound } from '../http/errors.js';
import type {
  AdminRecord, AlarmLogRecord, ApiAppRecord, AttrType, CustomerRecord, DeviceKind, DeviceRecord, DeviceTypeRecord,
  GroupRecord, ProjectRecord, RoleRecord, SeedData, Tags,
} from './model.js';
import { deviceCodeFor } from './device-code.js';
import { randomToken } from './seed.js';

/** Oldest history points are dropped beyond this many per device. */
export const HISTORY_CAP = 100_000;

export interface NewDevice {
  name: string;
  descr?: string;
  type?: string;
  groups?: string[];
  tags?: Tags;
  device_key?: string;
}

export interface DeviceAlarmState {
  alarm_level: number;
  alarm_status: number;
}

export class EmulatorState {
  readonly project: ProjectRecord;
  readonly apiApps: ApiAppRecord[];
  readonly admins: AdminRecord[];
  readonly types = new Map<string, DeviceTypeRecord>();
  readonly groups = new Map<string, GroupRecord>();
  readonly devices = new Map<string, DeviceRecord>();
  readonly roles = new Map<string, RoleRecord>();
  readonly customers = new Map<string, CustomerRecord>();
  readonly alarms: AlarmLogRecord[];
  private readonly connections = new Map<string, Set<string>>();
  private idCounter = 0;

  constructor(seed: SeedData, readonly clock: CloudClock) {
    this.project = seed.project;
    this.apiApps = seed.apiApps;
    this.admins = seed.admins;
    for (const t of seed.types) this.types.set(t.id, t);
    for (const g of seed.groups) this.groups.set(g.id, g);
    const seededCodes = new Set(seed.devices.map((d) => d.device_code).filter((c) => c !== ''));
    for (const d of seed.devices) {
      if (d.device_code === '') {
        d.device_code = deviceCodeFor(d.id, seededCodes);
        seededCodes.add(d.device_code);
      }
      const lastReport = d.history.filter((h) => h.type === 'report').at(-1);
      if (lastReport) d.active.attributes = lastReport.ts;
      this.devices.set(d.id, d);
    }
    for (const r of seed.roles) this.roles.set(r.id, r);
    for (const c of seed.customers) this.customers.set(c.id, c);
    this.alarms = [...seed.alarms].sort((a, b) => b.create_time - a.create_time);
  }

  now(): number {
    return this.clock.now();
  }

  /** A fresh id such as `dev-m3k2x9-7`. */
  newId(prefix: string): string {
    this.idCounter += 1;
    return `${prefix}-${this.now().toString(36)}-${this.idCounter}`;
  }

  requireDevice(id: string): DeviceRecord {
    const device = this.devices.get(id);
    if (!device) throw notFound('Device', 'device_id', id);
    return device;
  }
  requireType(id: string, field = 'device_type_id'): DeviceTypeRecord {
    const type = this.types.get(id);
    if (!type) throw notFound('Device type', field, id);
    return type;
  }
  requireCustomer(id: string): CustomerRecord {
    const customer = this.customers.get(id);
    if (!customer) throw notFound('Customer', 'customer_id', id);
    return customer;
  }
  requireGroups(ids: string[], field: string): void {
    const unknown = ids.find((g) => !this.groups.has(g));
    if (unknown !== undefined) throw notFound('Group', field, unknown);
  }
  requireRoles(ids: string[], field: string): void {
    const unknown = ids.find((r) => !this.roles.has(r));
    if (unknown !== undefined) throw notFound('Role', field, unknown);
  }

  deviceByToken(accessToken: string): DeviceRecord | undefined {
    for (const d of this.devices.values()) if (d.access_token === accessToken) return d;
    return undefined;
  }
  deviceByKey(deviceKey: string): DeviceRecord | undefined {
    for (const d of this.devices.values()) if (d.device_key === deviceKey) return d;
    return undefined;
  }
  typeByKey(typeKey: string): DeviceTypeRecord | undefined {
    for (const t of this.types.values()) if (t.type_key === typeKey) return t;
    return undefined;
  }

  kindOf(device: DeviceRecord): DeviceKind {
    return this.types.get(device.type)?.kind ?? 'direct';
  }

  /** The sub-device bound to `gatewayId` under `addr`, if any: a gateway's whole scope. */
  subDeviceAt(gatewayId: string, addr: string): DeviceRecord | undefined {
    for (const d of this.devices.values()) {
      if (d.binding?.gateway === gatewayId && d.binding.addr === addr) return d;
    }
    return undefined;
  }

  subDevicesOf(gatewayId: string): DeviceRecord[] {
    return [...this.devices.values()].filter((d) => d.binding?.gateway === gatewayId);
  }

  /** Throws a conflict when another device already holds `deviceKey`. */
  checkDeviceKeyFree(deviceKey: string, except?: string): void {
    const holder = this.deviceByKey(deviceKey);
    if (holder && holder.id !== except) throw conflict(`device_key already in use: ${deviceKey}`, 'device_key');
  }

  createDevice(input: NewDevice): DeviceRecord {
    const typeId = input.type ?? this.types.keys().next().value ?? '';
    this.requireType(typeId, 'type');
    this.requireGroups(input.groups ?? [], 'groups');
    const id = this.newId('dev');
    const deviceKey = input.device_key ?? id;
    this.checkDeviceKeyFree(deviceKey);
    const device: DeviceRecord = {
      id, name: input.name, descr: input.descr ?? '', device_key: deviceKey,
      access_token: randomToken(), view_token: randomToken(), device_code: deviceCodeFor(id, this.deviceCodes()),
      tags: input.tags ?? {}, create_time: this.now(), type: typeId, groups: [...new Set(input.groups ?? [])],
      attributes: new Map(), history: [], active: {}, extend_infos: {}, standard_infos: {}, info_update_times: {}, binding: undefined,
    };
    this.devices.set(id, device);
    return device;
  }

  private deviceCodes(): Set<string> {
    return new Set([...this.devices.values()].map((d) => d.device_code));
  }

  deleteDevice(id: string): void {
    this.requireDevice(id);
    this.devices.delete(id);
    this.connections.delete(id);
    // A deleted gateway leaves its sub-devices unbound (and offline): nobody speaks for them.
    for (const sub of this.subDevicesOf(id)) {
      sub.binding = undefined;
      this.markDisconnected(sub.id, 'gateway');
    }
    for (const c of this.customers.values()) c.devices = c.devices.filter((d) => d !== id);
    this.alarms.splice(0, this.alarms.length, ...this.alarms.filter((a) => a.device_id !== id));
  }

  /** Stores values as current attributes and appends them to history; returns the timestamp. */
  setAttributes(device: DeviceRecord, values: Record<string, unknown>, attrType: AttrType): number {
    const ts = this.now();
    for (const [name, value] of Object.entries(values)) {
      device.attributes.set(name, { value, attr_type: attrType, ts });
      device.history.push({ ts, name, value, type: attrType });
    }
    if (device.history.length > HISTORY_CAP) device.history.splice(0, device.history.length - HISTORY_CAP);
    return ts;
  }

  /** Current values; `keys` keeps only those identifiers (unknown ones are left out). */
  attributeValues(device: DeviceRecord, keys?: string[]): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, attr] of device.attributes) {
      if (!keys || keys.includes(name)) out[name] = attr.value;
    }
    return out;
  }

  noteActivity(device: DeviceRecord, kind: string): void {
    device.active[kind] = this.now();
  }

  /** Returns true when this changed the device's online state. */
  markConnected(deviceId: string, via: string): boolean {
    const wasOnline = this.isOnline(deviceId);
    const set = this.connections.get(deviceId) ?? new Set<string>();
    set.add(via);
    this.connections.set(deviceId, set);
    return !wasOnline;
  }
  markDisconnected(deviceId: string, via: string): boolean {
    const set = this.connections.get(deviceId);
    if (!set?.delete(via)) return false;
    if (set.size === 0) this.connections.delete(deviceId);
    return !this.isOnline(deviceId);
  }
  isOnline(deviceId: string): boolean {
    return (this.connections.get(deviceId)?.size ?? 0) > 0;
  }

  /** Activity rule (the spec leaves it open): a device that ever sent a message is active. */
  isActive(device: DeviceRecord): boolean {
    return Object.keys(device.active).length > 0 || this.isOnline(device.id);
  }

  /** Highest level among alarms whose latest log (per alarm rule) is raised (status 1). */
  alarmState(deviceId: string): DeviceAlarmState {
    const latest = new Map<string, AlarmLogRecord>();
    for (const log of this.alarms) {
      if (log.device_id !== deviceId) continue;
      const rule = String(log.alarm_info.rule_id ?? log.alarm_info.name ?? log.id);
      const seen = latest.get(rule);
      if (!seen || seen.create_time < log.create_time) latest.set(rule, log);
    }
    let level = 0;
    for (const log of latest.values()) if (log.alarm_status === 1) level = Math.max(level, log.alarm_level);
    return { alarm_level: level, alarm_status: level > 0 ? 1 : 0 };
  }

  /** The given groups, plus all their descendants when `includeSub`. */
  expandGroups(ids: string[], includeSub: boolean): Set<string> {
    const out = new Set<string>();
    const visit = (id: string) => {
      if (out.has(id)) return;
      out.add(id);
      if (includeSub) for (const child of this.groups.get(id)?.children ?? []) visit(child);
    };
    ids.forEach(visit);
    return out;
  }

  /** Devices filtered by the shared `groups` / `include_sub_groups` rule; [] selects ungrouped ones. */
  devicesInGroups(groups: string[] | undefined, includeSub: boolean): DeviceRecord[] {
    const all = [...this.devices.values()];
    if (groups === undefined) return all;
    if (groups.length === 0) return all.filter((d) => d.groups.length === 0);
    const wanted = this.expandGroups(groups, includeSub);
    return all.filter((d) => d.groups.some((g) => wanted.has(g)));
  }

  /** Customer accounts are unique project-wide. */
  checkAccountFree(account: string): void {
    for (const c of this.customers.values()) {
      if (c.account === account) throw new ApiError(ErrCode.conflict, `account already in use: ${account}`, [{ field: 'account', message: 'already in use' }]);
    }
  }

  summary(): Record<string, number> {
    return {
      device_types: this.types.size, groups: this.groups.size, devices: this.devices.size,
      customers: this.customers.size, roles: this.roles.size, admins: this.admins.length,
      api_apps: this.apiApps.length, alarm_logs: this.alarms.length,
    };
  }
}
