// YAML seed -> validated SeedData (every problem listed with its path).
import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { Fields, SeedError } from './seed-reader.js';
import type {
  AlarmLogRecord, AttrType, DeviceKind, DeviceRecord, DeviceTypeRecord, GroupRecord, HistoryPoint, SeedData, SubDeviceBinding,
} from './model.js';
import { checkBindings } from './seed-bindings.js';

export { SeedError };

export function randomToken(bytes = 16): string {
  return randomBytes(bytes).toString('hex');
}

const ATTR_TYPES: AttrType[] = ['report', 'push', 'cloud'];
const STREAM_TYPES = ['hex', 'text', 'json'];
const DEVICE_KINDS: DeviceKind[] = ['direct', 'gateway', 'sub_device'];
/** docs/protocol.md §5: `conn_type` "3" means the device is a gateway. */
export const GATEWAY_CONN_TYPE = '3';

/** `kind` defaults from `conn_type` ("3" = gateway), and a gateway's `conn_type` defaults to "3". */
function readKind(f: Fields): { kind: DeviceKind; conn_type: string } {
  const given = f.optionalString('kind');
  const rawConnType = f.optionalString('conn_type');
  let kind: DeviceKind = rawConnType === GATEWAY_CONN_TYPE ? 'gateway' : 'direct';
  if (given !== undefined) {
    if (DEVICE_KINDS.includes(given as DeviceKind)) kind = given as DeviceKind;
    else f.problem('kind', `must be one of ${DEVICE_KINDS.join(', ')}`);
  }
  const connType = rawConnType ?? (kind === 'gateway' ? GATEWAY_CONN_TYPE : '1');
  if ((kind === 'gateway') !== (connType === GATEWAY_CONN_TYPE)) {
    f.problem('conn_type', `must be "${GATEWAY_CONN_TYPE}" exactly when kind is gateway`);
  }
  return { kind, conn_type: connType };
}

function readBinding(f: Fields): SubDeviceBinding | undefined {
  const gateway = f.optionalString('gateway');
  const addr = f.optionalString('sub_device_addr');
  if (gateway === undefined && addr === undefined) return undefined;
  if (!gateway) f.problem('gateway', 'is required with sub_device_addr (the gateway device id)');
  if (!addr) f.problem('sub_device_addr', 'is required with gateway (a non-empty string)');
  return gateway && addr ? { gateway, addr } : undefined;
}

function readType(f: Fields, now: number): DeviceTypeRecord {
  const create = f.time('create_time', now);
  return {
    id: f.requiredString('id'),
    name: f.requiredString('name'),
    descr: f.string('descr'),
    tags: f.tags('tags'),
    create_time: create,
    conn_protocol: f.string('conn_protocol', 'mqtt'),
    ...readKind(f),
    type_key: f.optionalString('type_key'),
    allow_auto_create: f.bool('allow_auto_create', false),
    data_streams: f.list('data_streams', (s) => {
      const type = s.string('type', 'hex');
      if (!STREAM_TYPES.includes(type)) s.problem('type', `must be one of ${STREAM_TYPES.join(', ')}`);
      return { identifier: s.requiredString('identifier'), name: s.string('name'), type };
    }),
    attributes: f.list('attributes', (a) => ({
      identifier: a.requiredString('identifier'),
      name: a.string('name'),
      attr_type: a.string('attr_type', 'report'),
      data_type: a.string('data_type', 'number'),
      data_options: a.record('data_options'),
    })),
    extend_infos: f.list('extend_infos', (e) => ({
      id: e.requiredString('id'),
      info_type: e.string('info_type', 'string'),
      name: e.string('name'),
      descr: e.string('descr'),
      enabled: e.bool('enabled', true),
      options: e.record('options'),
      create_time: create,
      update_time: create,
      is_standard: e.bool('is_standard', false),
    })),
  };
}

function readGroups(f: Fields, field: string, parent: string | undefined, out: GroupRecord[], now: number): string[] {
  return f.list(field, (g) => {
    const id = g.requiredString('id');
    const group: GroupRecord = {
      id, name: g.requiredString('name'), descr: g.string('descr'), tags: g.tags('tags'),
      create_time: g.time('create_time', now), parent, children: [],
    };
    out.push(group);
    group.children = readGroups(g, 'children', id, out, now);
    return id;
  });
}

function readHistory(f: Fields, now: number): HistoryPoint[] {
  const points = f.list('history', (h) => {
    const type = h.string('type', 'report') as AttrType;
    if (!ATTR_TYPES.includes(type)) h.problem('type', `must be one of ${ATTR_TYPES.join(', ')}`);
    if (h.obj.value === undefined) h.problem('value', 'is required');
    return { ts: h.time('ts', now), name: h.requiredString('name'), value: h.obj.value, type };
  });
  return points.sort((a, b) => a.ts - b.ts);
}

function readDevice(f: Fields, now: number): DeviceRecord {
  const history = readHistory(f, now);
  const attributes = new Map(Object.entries(f.record('attributes')).map(([k, v]) => [k, { value: v, attr_type: 'report' as AttrType, ts: now }]));
  for (const point of history) {
    const current = attributes.get(point.name);
    if (!current || current.ts <= point.ts) attributes.set(point.name, { value: point.value, attr_type: point.type, ts: point.ts });
  }
  return {
    id: f.requiredString('id'),
    name: f.requiredString('name'),
    descr: f.string('descr'),
    device_key: f.requiredString('device_key'),
    access_token: f.string('access_token') || randomToken(),
    view_token: f.string('view_token') || randomToken(),
    device_code: f.string('device_code'),
    tags: f.tags('tags'),
    create_time: f.time('create_time', now),
    type: f.requiredString('type'),
    groups: f.stringList('groups'),
    attributes,
    history,
    active: {},
    extend_infos: f.primitives('extend_infos'),
    standard_infos: readStandardInfos(f),
    info_update_times: {},
    binding: readBinding(f),
  };
}

function readStandardInfos(f: Fields): DeviceRecord['standard_infos'] {
  const out: DeviceRecord['standard_infos'] = {};
  for (const [infoType, value] of Object.entries(f.record('standard_infos'))) {
    out[infoType] = f.child(f.at('standard_infos'), { [infoType]: value }).primitives(infoType);
  }
  return out;
}

function readAlarm(f: Fields, now: number): AlarmLogRecord {
  return {
    id: f.requiredString('id'),
    device_id: f.requiredString('device_id'),
    alarm_status: f.integer('alarm_status', 1),
    alarm_level: f.integer('alarm_level', 1),
    alarm_info: f.record('alarm_info'),
    create_time: f.time('create_time', now),
    notify_logs: Array.isArray(f.obj.notify_logs) ? f.obj.notify_logs : [],
  };
}

function checkUnique(problems: string[], what: string, values: string[]): void {
  const seen = new Set<string>();
  for (const v of values) {
    if (seen.has(v)) problems.push(`${what}: duplicate value "${v}"`);
    seen.add(v);
  }
}

function checkRefs(problems: string[], where: string, refs: string[], known: Set<string>, what: string): void {
  for (const r of refs) if (!known.has(r)) problems.push(`${where}: unknown ${what} "${r}"`);
}

function crossCheck(seed: SeedData, problems: string[]): void {
  const ids = <T extends { id: string }>(xs: T[]) => new Set(xs.map((x) => x.id));
  checkUnique(problems, 'device_types[].id', seed.types.map((t) => t.id));
  checkUnique(problems, 'groups id', seed.groups.map((g) => g.id));
  checkUnique(problems, 'devices[].id', seed.devices.map((d) => d.id));
  checkUnique(problems, 'devices[].device_key', seed.devices.map((d) => d.device_key));
  checkUnique(problems, 'devices[].device_code', seed.devices.flatMap((d) => (d.device_code ? [d.device_code] : [])));
  checkUnique(problems, 'devices[].access_token', seed.devices.map((d) => d.access_token));
  checkUnique(problems, 'customers[].account', seed.customers.map((c) => c.account));
  checkUnique(problems, 'device_types[].type_key', seed.types.flatMap((t) => (t.type_key ? [t.type_key] : [])));
  const types = ids(seed.types);
  const groups = ids(seed.groups);
  const devices = ids(seed.devices);
  const roles = ids(seed.roles);
  seed.devices.forEach((d, i) => {
    checkRefs(problems, `devices[${i}].type`, [d.type], types, 'device type');
    checkRefs(problems, `devices[${i}].groups`, d.groups, groups, 'group');
  });
  seed.customers.forEach((c, i) => {
    checkRefs(problems, `customers[${i}].roles`, c.roles, roles, 'role');
    checkRefs(problems, `customers[${i}].devices`, c.devices, devices, 'device');
  });
  seed.alarms.forEach((a, i) => checkRefs(problems, `alarms[${i}].device_id`, [a.device_id], devices, 'device'));
  checkBindings(seed, problems);
  if (seed.types.length === 0) problems.push('device_types: at least one device type is required');
}

/** Parse and validate a seed document; `now` anchors relative times (`ago: 2h`). */
export function parseSeed(text: string, now: number): SeedData {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new SeedError([`not valid YAML: ${(err as Error).message}`]);
  }
  const problems: string[] = [];
  const root = new Fields(doc, '', problems, now);
  const p = root.child('project', root.obj.project);
  const groups: GroupRecord[] = [];
  readGroups(root, 'groups', undefined, groups, now);
  const seed: SeedData = {
    project: {
      id: p.requiredString('id'), name: p.requiredString('name'), descr: p.string('descr'),
      tags: p.tags('tags'), project_key: p.requiredString('project_key'),
      view_key: p.string('view_key') || randomToken(8), view_secret: p.string('view_secret') || randomToken(),
    },
    apiApps: root.list('api_apps', (a) => ({
      app_id: a.requiredString('app_id'), access_key: a.requiredString('access_key'), secret_key: a.requiredString('secret_key'),
    })),
    admins: root.list('admins', (a) => ({
      id: a.requiredString('id'), account: a.requiredString('account'), password: a.requiredString('password'),
      name: a.string('name'), email: a.string('email'), tags: a.tags('tags'),
    })),
    types: root.list('device_types', (t) => readType(t, now)),
    groups,
    devices: root.list('devices', (d) => readDevice(d, now)),
    roles: root.list('roles', (r) => ({
      id: r.requiredString('id'), name: r.requiredString('name'), descr: r.string('descr'),
      allow_operate_device: r.bool('allow_operate_device', true),
      allow_alarm_msg_maintain: r.bool('allow_alarm_msg_maintain', false),
      allow_add_device: r.bool('allow_add_device', false),
      create_time: r.time('create_time', now),
    })),
    customers: root.list('customers', (c) => ({
      id: c.requiredString('id'), account: c.requiredString('account'), password: c.requiredString('password'),
      name: c.requiredString('name'), descr: c.string('descr'), email: c.string('email'), mobile: c.string('mobile'),
      tags: c.tags('tags'), locale: c.string('locale', 'en_US'), create_time: c.time('create_time', now),
      roles: c.stringList('roles'), devices: c.stringList('devices'),
    })),
    alarms: root.list('alarms', (a) => readAlarm(a, now)),
  };
  crossCheck(seed, problems);
  if (problems.length > 0) throw new SeedError(problems);
  return seed;
}

export async function loadSeedFile(path: string, now: number): Promise<SeedData> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new SeedError([`cannot read ${path}: ${(err as Error).message}`]);
  }
  return parseSeed(text, now);
}
