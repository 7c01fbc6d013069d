// The `devices` list: one entry per Modbus unit, with its limits and points, checked against its bus.
import { isBitTable, widthOf } from '../points/types.js';
import { NAME_PATTERN } from './buses.js';
import { Fields, joinPath } from './fields.js';
import { describeValue, suggestKey } from './issues.js';
import { compileCodecs, type CompiledDevice } from './compile.js';
import { SharedPointLists } from './shared-point-lists.js';
import { runSteps, type Steps } from './steps.js';
import { readCommands, readDeviceCloud } from './device-extras.js';
import { readStreams } from './streams.js';
import { findOverlaps } from './overlap.js';
import { ORDERS, readPoint, readReport, REPORT_DEFAULTS } from './points.js';
import { expandProfiles, relabelIssues } from './profile-expand.js';
import { EMPTY_LIBRARY, type ProfileLibrary } from './profile-types.js';
import type { BusConfig, ConfigIssue, DeviceConfig, DeviceLimits, PointConfig } from './site-types.js';

export const DEVICE_DEFAULTS = {
  pollIntervalMs: 1000,
  limits: { maxRegistersPerRead: 125, maxBitsPerRead: 2000, maxGap: 8, forceMultiWrite: false, reprobeFailedMs: 60_000, concurrent: false } satisfies DeviceLimits,
};

function readLimits(device: Fields): DeviceLimits | undefined {
  const f = device.section('limits');
  if (!f) return undefined;
  const d = DEVICE_DEFAULTS.limits;
  const maxRegistersPerRead = f.integer('maxRegistersPerRead', { default: d.maxRegistersPerRead, min: 1, max: 125 });
  const maxBitsPerRead = f.integer('maxBitsPerRead', { default: d.maxBitsPerRead, min: 1, max: 2000 });
  const maxGap = f.integer('maxGap', { default: d.maxGap, min: 0, max: 2000 });
  const forceMultiWrite = f.boolean('forceMultiWrite', { default: d.forceMultiWrite });
  const reprobeFailedMs = f.duration('reprobeFailedMs', { default: d.reprobeFailedMs, min: 1000, max: 86_400_000 });
  const concurrent = f.boolean('concurrent', { default: d.concurrent });
  f.rejectUnknownKeys();
  if (maxRegistersPerRead === undefined || maxBitsPerRead === undefined || maxGap === undefined || forceMultiWrite === undefined
    || reprobeFailedMs === undefined || concurrent === undefined) {
    return undefined;
  }
  return { maxRegistersPerRead, maxBitsPerRead, maxGap, forceMultiWrite, reprobeFailedMs, concurrent };
}

/** 0 polls continuously (as fast as the bus turn allows); otherwise 10 ms .. 24 h. */
function readPollInterval(f: Fields): number | undefined {
  const ms = f.duration('pollIntervalMs', { default: DEVICE_DEFAULTS.pollIntervalMs, min: 0 });
  if (ms !== undefined && ((ms > 0 && ms < 10) || ms > 86_400_000)) {
    f.report('pollIntervalMs', `must be 0 (poll continuously) or 10..86400000 ms (got ${ms} ms)`);
    return undefined;
  }
  return ms;
}

function checkUnitOnBus(f: Fields, unitId: number, bus: BusConfig): void {
  if (bus.kind !== 'tcp' && (unitId < 1 || unitId > 247)) {
    f.report('unitId', `must be 1..247 on ${bus.kind} bus "${bus.name}" (got ${unitId}${unitId === 0 ? ', the broadcast address' : ''})`);
  }
}

function registerRange(point: PointConfig): string {
  const last = point.address + (isBitTable(point.table) ? 1 : widthOf(point.type, point.length)) - 1;
  return last === point.address ? `${point.table} ${point.address}` : `${point.table} ${point.address}..${last}`;
}

/** Ids are compared as written, so a duplicate is found even when one of the points has other errors. */
function checkUniqueIds(list: readonly unknown[], pointsPath: string, issues: ConfigIssue[]): void {
  const ids = new Map<string, number>();
  list.forEach((raw, index) => {
    const id = (raw as { id?: unknown } | null)?.id;
    if (typeof id !== 'string') return;
    const first = ids.get(id);
    if (first !== undefined) issues.push({ path: `${joinPath(pointsPath, index)}.id`, message: `duplicate id "${id}" (also points[${first}])` });
    else ids.set(id, index);
  });
}

/** Point-level cross checks on valid points: no shared registers, each point fits one read. */
function checkPoints(points: readonly (PointConfig | undefined)[], pointsPath: string, limits: DeviceLimits | undefined, issues: ConfigIssue[]): void {
  points.forEach((point, index) => {
    if (!point) return;
    const path = joinPath(pointsPath, index);
    const width = widthOf(point.type, point.length);
    if (limits && !isBitTable(point.table) && width > limits.maxRegistersPerRead) {
      const key = point.type === 'string' ? 'length' : 'type';
      issues.push({ path: `${path}.${key}`, message: `${point.type} of ${width} registers does not fit limits.maxRegistersPerRead (${limits.maxRegistersPerRead})` });
    }
  });
  for (const { index, other } of findOverlaps(points)) {
    const a = points[index]!;
    const b = points[other]!;
    const where = a.type === 'bit' && b.type === 'bit' && a.address === b.address
      ? `bit ${a.bit} of ${a.table} ${a.address}`
      : registerRange(b);
    issues.push({ path: `${joinPath(pointsPath, index)}.address`, message: `overlaps point "${b.id}" (${where})` });
  }
}

function dropIssuesAt(issues: ConfigIssue[], from: number, path: string): void {
  for (let i = issues.length - 1; i >= from; i--) if (issues[i].path === path) issues.splice(i, 1);
}

/** A scale factor names an int16 point of the same device (SunSpec `sunssf`). */
function checkScaleFactors(points: readonly (PointConfig | undefined)[], pointsPath: string, issues: ConfigIssue[]): void {
  const byId = new Map(points.filter((p): p is PointConfig => p !== undefined).map((p) => [p.id, p]));
  points.forEach((point, index) => {
    if (!point?.scaleFactor) return;
    const factor = byId.get(point.scaleFactor);
    const at = `${joinPath(pointsPath, index)}.scaleFactor`;
    if (!factor) issues.push({ path: at, message: `"${point.scaleFactor}" is not a point of this device (excluded, or misspelt?)` });
    else if (factor === point) issues.push({ path: at, message: 'a point cannot be its own scale factor' });
    else if (factor.type !== 'int16') issues.push({ path: at, message: `"${point.scaleFactor}" must be an int16 point (it is ${factor.type})` });
    else if (factor.scaleFactor !== undefined) issues.push({ path: at, message: `"${point.scaleFactor}" is scaled by another point itself` });
  });
}

/**
 * `declared` is undefined when the buses section itself is broken: bus names cannot be checked then.
 * A device naming a profile is expanded first; issues about profile points name the profile and point.
 */
export function readDevice(
  raw: unknown, path: string, issues: ConfigIssue[], buses: ReadonlyMap<string, BusConfig>, declared: ReadonlySet<string> | undefined,
  profiles: ProfileLibrary = EMPTY_LIBRARY, shared = new SharedPointLists(),
): CompiledDevice | undefined {
  const before = issues.length;
  const expansion = expandProfiles(raw, path, issues, profiles);
  const device = readExpandedDevice(expansion.raw, path, issues, buses, declared, shared);
  relabelIssues(issues, before, path, expansion.labels);
  if (expansion.unresolved) dropIssuesAt(issues, before, joinPath(path, 'points'));
  if (issues.length > before || !device) return undefined;
  if (expansion.identification) device.config.identification = expansion.identification;
  if (expansion.renamedPoints) device.config.renamedPoints = expansion.renamedPoints;
  return device;
}

function readExpandedDevice(
  raw: unknown, path: string, issues: ConfigIssue[], buses: ReadonlyMap<string, BusConfig>, declared: ReadonlySet<string> | undefined, shared: SharedPointLists,
): CompiledDevice | undefined {
  const f = Fields.of(raw, path, issues);
  if (!f) return undefined;
  const before = issues.length;
  const name = f.string('name', { pattern: NAME_PATTERN, patternText: 'must start with a letter or digit and contain only letters, digits, "_", "." and "-"', name: true });
  const busName = f.string('bus');
  if (busName !== undefined && declared && !declared.has(busName)) {
    const guess = suggestKey(busName, declared);
    f.report('bus', `unknown bus ${describeValue(busName)}${guess ? ` (did you mean "${guess}"?)` : ''}`);
  }
  const unitId = f.integer('unitId', { min: 0, max: 255 });
  const bus = busName === undefined ? undefined : buses.get(busName);
  if (unitId !== undefined && bus) checkUnitOnBus(f, unitId, bus);
  const pollIntervalMs = readPollInterval(f);
  const limits = readLimits(f);
  const wordOrder = f.choice('wordOrder', ORDERS, { default: 'big' });
  const byteOrder = f.choice('byteOrder', ORDERS, { default: 'big' });
  const report = readReport(f, REPORT_DEFAULTS);
  const list = f.list('points', { required: true });
  const cloud = readDeviceCloud(f);
  const pointsPath = f.at('points');
  if (list && list.length === 0) f.report('points', 'must list at least one point');
  const defaults = { wordOrder: wordOrder ?? 'big', byteOrder: byteOrder ?? 'big', report: report ?? REPORT_DEFAULTS };
  const points = (list ?? []).map((item, index) => readPoint(item, joinPath(pointsPath, index), issues, defaults));
  checkUniqueIds(list ?? [], pointsPath, issues);
  checkPoints(points, pointsPath, limits, issues);
  checkScaleFactors(points, pointsPath, issues);
  const stamp = cloud?.timestampAttribute;
  if (stamp !== undefined && (stamp === 'online' || points.some((p) => p?.id === stamp))) {
    f.report('cloud', `timestampAttribute "${stamp}" is already a point id or "online": pick another name`);
  }
  const codecs = compileCodecs(points, pointsPath, issues);
  const commands = readCommands(f, codecs);
  const streams = readStreams(f, buses);
  f.rejectUnknownKeys();
  if (issues.length > before || !bus) return undefined;
  const config: DeviceConfig = {
    name: name!, bus: bus.name, unitId: unitId!, pollIntervalMs: pollIntervalMs!, limits: limits!, points: points as PointConfig[],
    ...(cloud ? { cloud } : {}), commands, streams,
  };
  return shared.compile(config, codecs, path, issues);
}

/** Parses and compiles every device; device names and (bus, unit id) pairs must be unique. */
export function readDevices(
  list: readonly unknown[], path: string, issues: ConfigIssue[], buses: readonly BusConfig[], declared: ReadonlySet<string> | undefined,
  profiles: ProfileLibrary = EMPTY_LIBRARY,
): CompiledDevice[] {
  return runSteps(readDevicesSteps(list, path, issues, buses, declared, profiles));
}

/** readDevices, yielding after each device. */
export function* readDevicesSteps(
  list: readonly unknown[], path: string, issues: ConfigIssue[], buses: readonly BusConfig[], declared: ReadonlySet<string> | undefined,
  profiles: ProfileLibrary = EMPTY_LIBRARY,
): Steps<CompiledDevice[]> {
  const busByName = new Map(buses.map((bus) => [bus.name, bus]));
  const names = new Map<string, number>();
  const units = new Map<string, string>();
  const devices: CompiledDevice[] = [];
  const shared = new SharedPointLists();
  for (const [index, raw] of list.entries()) {
    if (index > 0) yield;
    const itemPath = joinPath(path, index);
    const rawName = (raw as { name?: unknown } | null)?.name;
    const first = typeof rawName === 'string' ? names.get(rawName) : undefined;
    if (first !== undefined) {
      issues.push({ path: `${itemPath}.name`, message: `duplicate device name "${String(rawName)}" (also ${path}[${first}])` });
    } else if (typeof rawName === 'string') {
      names.set(rawName, index);
    }
    const compiled = readDevice(raw, itemPath, issues, busByName, declared, profiles, shared);
    if (!compiled || first !== undefined) continue;
    const device = compiled.config;
    const unitKey = `${device.bus}/${device.unitId}`;
    const owner = units.get(unitKey);
    if (owner !== undefined) {
      issues.push({ path: `${itemPath}.unitId`, message: `unit ${device.unitId} on bus "${device.bus}" is already device "${owner}"` });
      continue;
    }
    units.set(unitKey, device.name);
    devices.push(compiled);
  }
  return devices;
}
