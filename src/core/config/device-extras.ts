// Per-device `cloud` identity and `commands` blocks of the site file (streams: streams.ts).
import { isReservedName, reservedNameMessage } from './reserved-names.js';
import type { PointCodec } from '../points/codec.js';
import type { CommandConfig, CommandStep, ValueSource } from './command-types.js';
import { parseDurationMs } from './duration.js';
import { Fields, isMapping, joinPath } from './fields.js';
import { describeValue, unknownKeyMessage } from './issues.js';
import type { ConfigIssue, DeviceCloudConfig, PointConfig } from './site-types.js';

const METHOD_PATTERN = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const BUILT_IN_METHODS = new Set(['read', 'write']);

export function readDeviceCloud(device: Fields): DeviceCloudConfig | undefined {
  if (!device.has('cloud')) {
    device.take('cloud');
    return undefined;
  }
  const f = device.section('cloud');
  if (!f) return undefined;
  const cloud: DeviceCloudConfig = { allowCreate: f.boolean('allowCreate', { default: false }) ?? false };
  for (const key of ['deviceId', 'deviceKey', 'typeKey', 'accessToken', 'projectKey', 'timestampAttribute', 'subDeviceAddress'] as const) {
    const value = f.string(key, { optional: true });
    if (value !== undefined) cloud[key] = value;
  }
  const mode = f.choice('mode', ['direct', 'gateway'] as const, { optional: true });
  if (mode !== undefined) cloud.mode = mode;
  f.rejectUnknownKeys();
  if (cloud.accessToken === undefined && cloud.deviceId === undefined && cloud.deviceKey === undefined) {
    device.report('cloud', 'needs accessToken, deviceId or deviceKey to know the device\'s cloud identity');
  }
  return cloud;
}

function valueSource(raw: Record<string, unknown>, path: string, params: ReadonlySet<string>, issues: ConfigIssue[]): ValueSource | undefined {
  if (raw.param !== undefined && raw.value !== undefined) {
    issues.push({ path, message: 'has both `value` and `param`: give one' });
    return undefined;
  }
  if (raw.param !== undefined) {
    if (typeof raw.param !== 'string') {
      issues.push({ path: `${path}.param`, message: `must be a parameter name (got ${describeValue(raw.param)})` });
      return undefined;
    }
    if (!params.has(raw.param)) issues.push({ path: `${path}.param`, message: `"${raw.param}" is not listed in params` });
    return { param: raw.param };
  }
  if (raw.value !== undefined) return { value: raw.value };
  issues.push({ path, message: 'needs `value` or `param`' });
  return undefined;
}

const STEP_KEYS = {
  write: ['write', 'value', 'param'],
  read: ['read'],
  delay: ['delay'],
  pulse: ['pulse', 'value', 'param', 'for', 'restore'],
} as const;
type StepKind = keyof typeof STEP_KEYS;

/** The one kind of step a mapping describes; other kinds and unknown keys are issues. */
function stepKind(raw: Record<string, unknown>, path: string, issues: ConfigIssue[]): StepKind | undefined {
  const kinds = (Object.keys(STEP_KEYS) as StepKind[]).filter((kind) => raw[kind] !== undefined);
  if (kinds.length === 0) {
    issues.push({ path, message: 'must have one of write, read, delay or pulse' });
    return undefined;
  }
  if (kinds.length > 1) {
    issues.push({ path, message: `has ${kinds.join(' and ')}: one step does one thing, use one step each` });
    return undefined;
  }
  const allowed: readonly string[] = STEP_KEYS[kinds[0]];
  for (const key of Object.keys(raw)) {
    if (!allowed.includes(key)) issues.push({ path: joinPath(path, key), message: unknownKeyMessage(key, allowed) });
  }
  return kinds[0];
}

/** The codec of the writable point `id` names, or undefined after an issue. */
function checkWritable(id: unknown, path: string, codecs: ReadonlyMap<string, PointCodec>, issues: ConfigIssue[]): PointCodec | undefined {
  const codec = typeof id === 'string' ? codecs.get(id) : undefined;
  if (!codec) issues.push({ path, message: `unknown point ${describeValue(id)}` });
  else if (!codec.point.writable) issues.push({ path, message: `point "${codec.point.id}" is not writable` });
  return codec?.point.writable ? codec : undefined;
}

function checkLiteral(codec: PointCodec | undefined, source: ValueSource | undefined, path: string, issues: ConfigIssue[]): void {
  if (!codec || !source || !('value' in source)) return;
  const encoded = codec.encode(source.value);
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

function readStep(raw: unknown, path: string, codecs: ReadonlyMap<string, PointCodec>, params: ReadonlySet<string>, issues: ConfigIssue[]): CommandStep | undefined {
  if (!isMapping(raw)) {
    issues.push({ path, message: `must be a mapping with write, read, delay or pulse (got ${describeValue(raw)})` });
    return undefined;
  }
  const kind = stepKind(raw, path, issues);
  if (kind === 'write') {
    const codec = checkWritable(raw.write, `${path}.write`, codecs, issues);
    const source = valueSource(raw, path, params, issues);
    checkLiteral(codec, source, `${path}.value`, issues);
    return codec && source ? { kind: 'write', point: codec.point.id, ...source } : undefined;
  }
  if (kind === 'read') {
    const ids = Array.isArray(raw.read) ? raw.read : [raw.read];
    const unknown = ids.filter((id) => typeof id !== 'string' || !codecs.has(id));
    if (unknown.length > 0 || ids.length === 0) {
      issues.push({ path: `${path}.read`, message: ids.length === 0 ? 'lists no point' : `unknown point(s): ${unknown.map(describeValue).join(', ')}` });
      return undefined;
    }
    return { kind: 'read', points: ids as string[] };
  }
  if (kind === 'delay') {
    const ms = delayOf(raw.delay, `${path}.delay`, issues);
    return ms === undefined ? undefined : { kind: 'delay', ms };
  }
  if (kind === 'pulse') {
    const codec = checkWritable(raw.pulse, `${path}.pulse`, codecs, issues);
    const source = valueSource(raw, path, params, issues);
    checkLiteral(codec, source, `${path}.value`, issues);
    if (raw.restore === undefined) issues.push({ path: `${path}.restore`, message: 'required: the value written back after `for`' });
    else checkLiteral(codec, { value: raw.restore }, `${path}.restore`, issues);
    const ms = raw.for === undefined ? undefined : delayOf(raw.for, `${path}.for`, issues);
    if (raw.for === undefined) issues.push({ path: `${path}.for`, message: 'required: how long the value is held, like "500ms"' });
    return codec && source && ms !== undefined && raw.restore !== undefined ? { kind: 'pulse', point: codec.point.id, ms, restore: raw.restore, ...source } : undefined;
  }
  return undefined;
}

/** `codecs`: one per valid point of the device (compile.ts), used to check literal values. */
export function readCommands(device: Fields, codecs: ReadonlyMap<string, PointCodec>): CommandConfig[] {
  const raw = device.take('commands');
  if (raw === undefined) return [];
  const path = device.at('commands');
  const issues = device.issues;
  if (!isMapping(raw)) {
    issues.push({ path, message: `must be a mapping of method -> { params, steps } (got ${describeValue(raw)})` });
    return [];
  }
  const commands: CommandConfig[] = [];
  for (const [method, body] of Object.entries(raw)) {
    const at = joinPath(path, method || '""');
    if (!METHOD_PATTERN.test(method)) issues.push({ path: at, message: 'method names start with a letter or "_" and contain letters, digits, "_", "." or "-"' });
    else if (BUILT_IN_METHODS.has(method)) issues.push({ path: at, message: `"${method}" is a built-in method` });
    else if (isReservedName(method)) issues.push({ path: at, message: reservedNameMessage(method) });
    const f = Fields.of(body, at, issues);
    if (!f) continue;
    const paramList = f.list('params') ?? [];
    const requiredParams = paramList.filter((p): p is string => typeof p === 'string');
    const twice = requiredParams.filter((name, i) => requiredParams.indexOf(name) !== i);
    if (requiredParams.length !== paramList.length) f.report('params', 'must be a list of parameter names');
    else if (twice.length > 0) f.report('params', `lists ${twice.map((n) => `"${n}"`).join(', ')} more than once`);
    for (const name of requiredParams.filter(isReservedName)) f.report('params', reservedNameMessage(name));
    const listed = f.list('steps', { required: true });
    const stepsRaw = listed ?? [];
    f.rejectUnknownKeys();
    const before = issues.length;
    const steps = stepsRaw.map((s, i) => readStep(s, joinPath(f.at('steps'), i), codecs, new Set(requiredParams), issues));
    if (listed?.length === 0) f.report('steps', 'must list at least one step');
    if (issues.length === before) commands.push({ method, requiredParams, steps: steps as CommandStep[] });
  }
  return commands;
}
