// One profile file's text, parsed, -> DeviceProfile, checked like a device of its own (pure).
import { readDevice } from './devices.js';
import { Fields, isMapping } from './fields.js';
import { readIdentification } from './profile-identification.js';
import { SOURCE_QUALITIES, type DeviceProfile, type ProfileIdentification, type ProfileSource, type SunSpecPlacement } from './profile-types.js';
import type { BusConfig, ConfigIssue } from './site-types.js';

export const PROFILE_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;
const DEVICE_KEYS = ['pollIntervalMs', 'wordOrder', 'byteOrder', 'limits', 'report'];

/** The bus a profile is checked on: TCP, so any unit id and every limit is allowed. */
const CHECK_BUS: BusConfig = {
  kind: 'tcp', name: 'profile-check', host: '127.0.0.1', port: 502, timeoutMs: 1000, maxInFlight: 1,
  reconnect: { initialMs: 1000, maxMs: 1000, jitter: 0 }, cooldown: { afterTimeouts: 3, initialMs: 1000, maxMs: 1000 }, busyRetries: 0,
};

function readSource(f: Fields): ProfileSource | undefined {
  // Required: the manual the register map comes from (an absent block reports each missing key).
  const s = f.section('source');
  if (!s) return undefined;
  const title = s.string('title');
  const version = s.string('version');
  const table = s.string('table');
  const url = s.string('url', { optional: true });
  const notes = s.string('notes', { optional: true });
  const quality = s.choice('quality', SOURCE_QUALITIES, { default: 'primary' });
  s.rejectUnknownKeys();
  // Secondary material must say what it is, so a reader can weigh it.
  if (quality === 'secondary' && notes === undefined) s.report('notes', 'required when quality is secondary: say where the addresses come from');
  if (title === undefined || version === undefined || table === undefined || quality === undefined) return undefined;
  return { title, version, table, ...(url !== undefined ? { url } : {}), ...(notes !== undefined ? { notes } : {}), quality };
}

function readSunSpec(f: Fields): SunSpecPlacement | undefined {
  if (!f.has('sunspec')) return undefined;
  const s = f.section('sunspec');
  if (!s) return undefined;
  const model = s.integer('model', { min: 1, max: 65534 });
  const length = s.integer('length', { min: 0, max: 65535 });
  const defaultAddress = s.integer('defaultAddress', { min: 0, max: 65535 });
  s.rejectUnknownKeys();
  return model !== undefined && length !== undefined && defaultAddress !== undefined ? { model, length, defaultAddress } : undefined;
}

/** SunSpec points live inside their model: offset 2 (after ID and L) up to 2 + length. */
function checkInsideModel(points: readonly unknown[], sunspec: SunSpecPlacement, f: Fields): void {
  points.forEach((raw, index) => {
    if (!isMapping(raw) || typeof raw.address !== 'number') return;
    if (raw.address < 2 || raw.address >= sunspec.length + 2) {
      f.report('points', `points[${index}] at offset ${raw.address} is outside model ${sunspec.model} (offsets 2..${sunspec.length + 1})`);
    }
  });
}

/** A SunSpec profile's identification registers are offsets in its model too: 0 (ID) up to the model's end. */
function checkIdentificationInsideModel(identification: ProfileIdentification, sunspec: SunSpecPlacement, f: Fields): void {
  identification.registers.forEach((register, index) => {
    const { address, length } = register.point;
    if (address + length > sunspec.length + 2) f.report('identification', `registers[${index}] at offset ${address} is outside model ${sunspec.model} (offsets 0..${sunspec.length + 1})`);
  });
}

/**
 * `renamed: { OLD: NEW }`: ids the profile's points had before (the point vocabulary renamed them),
 * so a site file naming an old id keeps working for one release. OLD is no point of the profile, NEW is one.
 */
function readRenamed(f: Fields, points: readonly unknown[]): Record<string, string> | undefined {
  if (!f.has('renamed')) return undefined;
  const raw = f.take('renamed');
  if (!isMapping(raw)) {
    f.report('renamed', 'must be a mapping of former point ids to current ones');
    return undefined;
  }
  const ids = new Set(points.map((point) => (isMapping(point) ? point.id : undefined)));
  const renamed: Record<string, string> = {};
  for (const [formerly, now] of Object.entries(raw)) {
    if (ids.has(formerly)) f.report('renamed', `"${formerly}" is still a point of this profile: a former id cannot be a current one`);
    else if (typeof now !== 'string' || !ids.has(now)) f.report('renamed', `"${formerly}" must name a point of this profile (got ${JSON.stringify(now)})`);
    else renamed[formerly] = now;
  }
  return renamed;
}

/** `expectedName`: the file's name without .yaml; a profile is found by it, so they must agree. */
export function readProfileDoc(raw: unknown, expectedName: string, file: string, issues: ConfigIssue[]): DeviceProfile | undefined {
  const path = `profile ${expectedName}`;
  const f = Fields.of(raw, path, issues);
  if (!f) return undefined;
  const before = issues.length;
  const name = f.string('name', { pattern: PROFILE_NAME_PATTERN, patternText: 'must be 1 to 64 lower-case letters, digits or "-"' });
  if (name !== undefined && name !== expectedName) f.report('name', `must match the file name "${expectedName}.yaml" (got "${name}")`);
  const vendor = f.string('vendor');
  const model = f.string('model');
  const firmware = f.string('firmware', { optional: true });
  const source = readSource(f);
  const sunspec = readSunSpec(f);
  const identification = readIdentification(f);
  const deviceFields = f.section('device');
  const device: Record<string, unknown> = {};
  if (deviceFields) {
    for (const key of DEVICE_KEYS) if (deviceFields.has(key)) device[key] = deviceFields.take(key);
    deviceFields.rejectUnknownKeys();
  }
  const points = f.list('points', { required: true }) ?? [];
  const renamed = readRenamed(f, points);
  f.rejectUnknownKeys();
  if (sunspec) checkInsideModel(points, sunspec, f);
  if (sunspec && identification) checkIdentificationInsideModel(identification, sunspec, f);
  const shift = sunspec?.defaultAddress ?? 0;
  const placed = points.map((point) => (isMapping(point) && typeof point.address === 'number' ? { ...point, address: point.address + shift } : point));
  // Checked as a device would be, so a shipped profile can never be the cause of a site's problem.
  readDevice({ name: expectedName, bus: CHECK_BUS.name, unitId: 1, ...device, points: placed }, path, issues, new Map([[CHECK_BUS.name, CHECK_BUS]]), new Set([CHECK_BUS.name]));
  if (issues.length > before) return undefined;
  return {
    name: name!, vendor: vendor!, model: model!, ...(firmware !== undefined ? { firmware } : {}), source: source!,
    ...(sunspec ? { sunspec } : {}), ...(identification ? { identification } : {}), device, points: points as Record<string, unknown>[], ...(renamed ? { renamed } : {}), file,
  };
}
