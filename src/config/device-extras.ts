// Per-device `cloud` identity, `commands` and `streams` blocks of the site file.
import { compilePoint } from '../points/codec.js';
import type { CommandConfig, CommandStep, StreamConfig, StreamTarget, ValueSource } from './command-types.js';
import { parseDurationMs } from './duration.js';
import { Fields, isMapping, joinPath } from './fields.js';
import { describeValue } from './issues.js';
import type { BusConfig, ConfigIssue, DeviceCloudConfig, PointConfig } from './site-types.js';

const METHOD_PATTERN = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const STREAM_PATTERN = /^[A-Za-z0-9_]+$/;
const BUILT_IN_METHODS = new Set(['read', 'write']);

export const STREAM_DEFAULTS = { quietMs: 50, replyTimeoutMs: 1000, maxReplyBytes: 4096 };

export function readDeviceCloud(device: Fields): DeviceCloudConfig | undefined {
  if (!device.has('cloud')) {
    device.take('cloud');
    return undefined;
  }
  const f = device.section('cloud');
  if (!f) return undefined;
  const cloud: DeviceCloudConfig = { allowCreate: f.boolean('allowCreate', { default: false }) ?? false };
  for (const key of ['deviceId', 'deviceKey', 'typeKey', 'accessToken', 'projectKey'] as const) {
    const value = f.string(key, { optional: true });
    if (value !== undefined) cloud[key] = value;
  }
  f.rejectUnknownKeys();
  if (cloud.accessToken === undefined && cloud.deviceId === undefined && cloud.deviceKey === undefined) {
    device.report('cloud', 'needs accessToken, deviceId or deviceKey to know the device\'s cloud identity');
  }
  return cloud;
}

function valueSource(raw: Record<string, unknown>, path: string, params: ReadonlySet<string>, issues: ConfigIssue[]): ValueSource | undefined {
  if (typeof raw.param === 'string') {
    if (!params.has(raw.param)) issues.push({ path: `${path}.param`, message: `"${raw.param}" is not listed in params` });
    return { param: raw.param };
  }
  if (raw.value !== undefined) return { value: raw.value };
  issues.push({ path, message: 'needs `value` or `param`' });
  return undefined;
}

function checkWritable(id: unknown, path: string, points: ReadonlyMap<string, PointConfig>, issues: ConfigIssue[]): PointConfig | undefined {
  const point = typeof id === 'string' ? points.get(id) : undefined;
  if (!point) issues.push({ path, message: `unknown point ${describeValue(id)}` });
  else if (!point.writable) issues.push({ path, message: `point "${point.id}" is not writable` });
  return point?.writable ? point : undefined;
}

function checkLiteral(point: PointConfig | undefined, source: ValueSource | undefined, path: string, issues: ConfigIssue[]): void {
  if (!point || !source || !('value' in source)) return;
  const encoded = compilePoint(point).encode(source.value);
  if (!encoded.ok) issues.push({ path, message: encoded.error });
}

/** A step's duration (`delay`, or a pulse's `for`): 0..60 s, as ms or a duration string. */
function delayOf(raw: unknown, path: string, issues: ConfigIssue[]): number | undefined {
  const ms = parseDurationMs(raw);
  if (ms === undefined) issues.push({ path, message: `must be a duration in ms or like "500ms", "2s" (got ${describeValue(raw)})` });
  else if (ms < 0 || ms > 60_000) issues.push({ path, message: `must be 0..60000 ms (got ${ms} ms)` });
  else return ms;
  return undefined;
}

function readStep(raw: unknown, path: string, points: ReadonlyMap<string, PointConfig>, params: ReadonlySet<string>, issues: ConfigIssue[]): CommandStep | undefined {
  if (!isMapping(raw)) {
    issues.push({ path, message: `must be a mapping with write, read, delay or pulse (got ${describeValue(raw)})` });
    return undefined;
  }
  if (raw.write !== undefined) {
    const point = checkWritable(raw.write, `${path}.write`, points, issues);
    const source = valueSource(raw, path, params, issues);
    checkLiteral(point, source, `${path}.value`, issues);
    return point && source ? { kind: 'write', point: point.id, ...source } : undefined;
  }
  if (raw.read !== undefined) {
    const ids = Array.isArray(raw.read) ? raw.read : [raw.read];
    const unknown = ids.filter((id) => typeof id !== 'string' || !points.has(id));
    if (unknown.length > 0 || ids.length === 0) {
      issues.push({ path: `${path}.read`, message: ids.length === 0 ? 'lists no point' : `unknown point(s): ${unknown.map(describeValue).join(', ')}` });
      return undefined;
    }
    return { kind: 'read', points: ids as string[] };
  }
  if (raw.delay !== undefined) {
    const ms = delayOf(raw.delay, `${path}.delay`, issues);
    return ms === undefined ? undefined : { kind: 'delay', ms };
  }
  if (raw.pulse !== undefined) {
    const point = checkWritable(raw.pulse, `${path}.pulse`, points, issues);
    const source = valueSource(raw, path, params, issues);
    checkLiteral(point, source, `${path}.value`, issues);
    checkLiteral(point, { value: raw.restore }, `${path}.restore`, issues);
    const ms = delayOf(raw.for, `${path}.for`, issues);
    return point && source && ms !== undefined ? { kind: 'pulse', point: point.id, ms, restore: raw.restore, ...source } : undefined;
  }
  issues.push({ path, message: 'must have one of write, read, delay or pulse' });
  return undefined;
}

export function readCommands(device: Fields, points: readonly (PointConfig | undefined)[]): CommandConfig[] {
  const raw = device.take('commands');
  if (raw === undefined) return [];
  const path = device.at('commands');
  const issues = device.issues;
  if (!isMapping(raw)) {
    issues.push({ path, message: `must be a mapping of method -> { params, steps } (got ${describeValue(raw)})` });
    return [];
  }
  const byId = new Map(points.filter((p): p is PointConfig => p !== undefined).map((p) => [p.id, p]));
  const commands: CommandConfig[] = [];
  for (const [method, body] of Object.entries(raw)) {
    const at = joinPath(path, method);
    if (!METHOD_PATTERN.test(method)) issues.push({ path: at, message: 'method names start with a letter or "_" and contain letters, digits, "_", "." or "-"' });
    else if (BUILT_IN_METHODS.has(method)) issues.push({ path: at, message: `"${method}" is a built-in method` });
    const f = Fields.of(body, at, issues);
    if (!f) continue;
    const paramList = f.list('params') ?? [];
    const requiredParams = paramList.filter((p): p is string => typeof p === 'string');
    if (requiredParams.length !== paramList.length) f.report('params', 'must be a list of parameter names');
    const stepsRaw = f.list('steps', { required: true }) ?? [];
    f.rejectUnknownKeys();
    const before = issues.length;
    const steps = stepsRaw.map((s, i) => readStep(s, joinPath(f.at('steps'), i), byId, new Set(requiredParams), issues));
    if (stepsRaw.length === 0) f.report('steps', 'must list at least one step');
    if (issues.length === before) commands.push({ method, requiredParams, steps: steps as CommandStep[] });
  }
  return commands;
}

function readTarget(f: Fields, buses: ReadonlyMap<string, BusConfig>): StreamTarget | undefined {
  const kinds = ['serial', 'tcp', 'bus'].filter((k) => f.has(k));
  if (kinds.length !== 1) {
    f.issues.push({ path: f.path, message: 'needs exactly one target: serial, tcp or bus' });
    for (const k of ['serial', 'tcp', 'bus']) f.take(k);
    return undefined;
  }
  if (kinds[0] === 'bus') {
    const name = f.string('bus');
    const bus = name === undefined ? undefined : buses.get(name);
    if (name !== undefined && bus?.kind !== 'rtu') f.report('bus', `must name an rtu bus (got ${describeValue(name)})`);
    return name !== undefined && bus?.kind === 'rtu' ? { kind: 'bus', bus: name } : undefined;
  }
  if (kinds[0] === 'tcp') {
    const raw = f.take('tcp');
    const m = typeof raw === 'string' ? /^([A-Za-z0-9.-]+):(\d{1,5})$/.exec(raw) : null;
    const port = m ? Number(m[2]) : NaN;
    if (!m || port < 1 || port > 65535) {
      f.report('tcp', `must be "host:port" (got ${describeValue(raw)})`);
      return undefined;
    }
    return { kind: 'tcp', host: m[1], port };
  }
  const s = f.section('serial');
  if (!s) return undefined;
  const path = s.string('path');
  const baudRate = s.integer('baudRate', { default: 9600, min: 50, max: 4_000_000 });
  const parity = s.choice('parity', ['none', 'even', 'odd'] as const, { default: 'none' });
  const dataBits = s.choice('dataBits', [7, 8] as const, { default: 8 });
  const stopBits = s.choice('stopBits', [1, 2] as const, { default: 1 });
  s.rejectUnknownKeys();
  const modbusPath = [...buses.values()].find((b) => b.kind === 'rtu' && b.path === path);
  if (modbusPath) s.report('path', `is the port of Modbus bus "${modbusPath.name}": use \`bus: ${modbusPath.name}\` to share the line`);
  if (path === undefined || baudRate === undefined || parity === undefined || dataBits === undefined || stopBits === undefined || modbusPath) return undefined;
  return { kind: 'serial', path, baudRate, parity, dataBits, stopBits };
}

export function readStreams(device: Fields, buses: ReadonlyMap<string, BusConfig>): StreamConfig[] {
  const raw = device.take('streams');
  if (raw === undefined) return [];
  const path = device.at('streams');
  if (!isMapping(raw)) {
    device.issues.push({ path, message: `must be a mapping of identifier -> target (got ${describeValue(raw)})` });
    return [];
  }
  const streams: StreamConfig[] = [];
  for (const [identifier, body] of Object.entries(raw)) {
    const at = joinPath(path, identifier);
    if (!STREAM_PATTERN.test(identifier)) device.issues.push({ path: at, message: 'stream identifiers contain only letters, digits and "_"' });
    const f = Fields.of(body, at, device.issues);
    if (!f) continue;
    const target = readTarget(f, buses);
    const quietMs = f.duration('quietMs', { default: STREAM_DEFAULTS.quietMs, min: 1, max: 10_000 });
    const replyTimeoutMs = f.duration('replyTimeoutMs', { default: STREAM_DEFAULTS.replyTimeoutMs, min: 1, max: 60_000 });
    const maxReplyBytes = f.integer('maxReplyBytes', { default: STREAM_DEFAULTS.maxReplyBytes, min: 1, max: 1_048_576 });
    f.rejectUnknownKeys();
    if (target && quietMs !== undefined && replyTimeoutMs !== undefined && maxReplyBytes !== undefined && STREAM_PATTERN.test(identifier)) {
      streams.push({ identifier, target, quietMs, replyTimeoutMs, maxReplyBytes });
    }
  }
  return streams;
}
