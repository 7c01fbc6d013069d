// A device's `profile:` (+ `points:` overrides and additions, `exclude:`) -> the device as if every
// point had been written out (pure). The expanded device is then checked like any other.
import { Fields, isMapping, joinPath } from './fields.js';
import { describeValue, suggestKey } from './issues.js';
import type { DeviceProfile, ProfileLibrary } from './profile-types.js';
import type { ConfigIssue, DeviceIdentification } from './site-types.js';
import { identificationAt, readKey } from './identification-match.js';

export interface Expansion {
  raw: unknown;
  /** What the device's profiles say it must identify as (absent: none declares it, or `identify: false`). */
  identification?: DeviceIdentification;
  /** The profile reference was wrong: the device's points are unknown, so "no points" is not news. */
  unresolved?: boolean;
  /** Per expanded point index: where an issue about it should point (site points keep their own path). */
  labels: (string | undefined)[];
  /** Former point ids the site still names (in `exclude` or `points`), taken as the current ones for one release. */
  renamedPoints?: RenamedPointUse[];
}

export interface RenamedPointUse {
  profile: string;
  formerly: string;
  now: string;
  /** Where the site names it. */
  path: string;
}

interface Placed {
  profile: DeviceProfile;
  base: number;
  /** Put before each point id (and scale-factor reference), so two models' same-named points can coexist. */
  prefix: string;
  at: string;
}

const PREFIX_PATTERN = /^[A-Za-z0-9_]{1,16}$/;
/** More than a device could hold (a SunSpec device has a handful of models): a bigger list is a mistake. */
const MAX_PROFILES_PER_DEVICE = 16;

function unknownProfile(name: string, library: ProfileLibrary): string {
  const guess = suggestKey(name, library.names());
  return `unknown profile ${describeValue(name)}${guess ? ` (did you mean "${guess}"?)` : ''}; \`fieldgate profiles\` lists them`;
}

/** `profile: NAME`, or a list of names and `{ name, address, prefix }` (SunSpec models placed where the device has them). */
function readProfileRefs(value: unknown, at: string, library: ProfileLibrary, issues: ConfigIssue[]): Placed[] | undefined {
  const entries = Array.isArray(value) ? value : [value];
  if (entries.length === 0 || entries.length > MAX_PROFILES_PER_DEVICE) {
    issues.push({ path: at, message: `must name 1 to ${MAX_PROFILES_PER_DEVICE} profiles (got ${entries.length})` });
    return undefined;
  }
  const placed: Placed[] = [];
  let ok = true;
  entries.forEach((entry, index) => {
    const path = Array.isArray(value) ? joinPath(at, index) : at;
    const f = isMapping(entry) ? Fields.of(entry, path, issues) : undefined;
    const name = f ? f.string('name') : entry;
    const address = f ? f.integer('address', { optional: true, min: 0, max: 65535 }) : undefined;
    const prefix = f ? f.string('prefix', { optional: true, pattern: PREFIX_PATTERN, patternText: 'must be 1 to 16 letters, digits or "_"' }) : undefined;
    f?.rejectUnknownKeys();
    if (typeof name !== 'string' || name.length === 0) {
      if (!f) issues.push({ path, message: `must be a profile name or { name, address } (got ${describeValue(entry)})` });
      ok = false;
      return;
    }
    const profile = library.get(name);
    if (placed.some((p) => p.profile.name === name && p.prefix === (prefix ?? ''))) {
      issues.push({ path, message: `"${name}" is listed twice: a second instance needs its own address and prefix` });
      ok = false;
      return;
    }
    if (!profile) {
      issues.push({ path: f ? `${path}.name` : path, message: unknownProfile(name, library) });
      ok = false;
      return;
    }
    if (address !== undefined && !profile.sunspec) {
      issues.push({ path: `${path}.address`, message: `only SunSpec profiles are placed by address ("${name}" has fixed addresses)` });
      ok = false;
      return;
    }
    const base = address ?? profile.sunspec?.defaultAddress ?? 0;
    if (profile.sunspec && base + 2 + profile.sunspec.length > 65536) {
      issues.push({ path: `${path}.address`, message: `model ${profile.sunspec.model} (${2 + profile.sunspec.length} registers) at ${base} runs past the last address 65535` });
      ok = false;
      return;
    }
    placed.push({ profile, base, prefix: prefix ?? '', at: path });
  });
  return ok ? placed : undefined;
}

/** A site id that names a renamed profile point -> the current id, the use recorded; any other id unchanged. */
type Renamer = (id: unknown, path: string) => unknown;

function renamerOf(placed: readonly Placed[], uses: RenamedPointUse[]): Renamer {
  const current = new Map<string, { profile: string; now: string }>();
  for (const { profile, prefix } of placed) {
    for (const [formerly, now] of Object.entries(profile.renamed ?? {})) current.set(`${prefix}${formerly}`, { profile: profile.name, now: `${prefix}${now}` });
  }
  return (id, path) => {
    const renamed = typeof id === 'string' ? current.get(id) : undefined;
    if (!renamed || typeof id !== 'string') return id;
    uses.push({ profile: renamed.profile, formerly: id, now: renamed.now, path });
    return renamed.now;
  };
}

function readExcludes(device: Fields, known: ReadonlyMap<string, string>, rename: Renamer): Set<string> {
  const list = device.list('exclude') ?? [];
  const excluded = new Set<string>();
  list.forEach((listed, index) => {
    const path = joinPath(device.at('exclude'), index);
    const id = rename(listed, path);
    if (typeof id !== 'string' || !known.has(id)) {
      const guess = typeof id === 'string' ? suggestKey(id, known.keys()) : undefined;
      device.issues.push({ path, message: `unknown point ${describeValue(id)}: no profile of this device has it${guess ? ` (did you mean "${guess}"?)` : ''}` });
    } else {
      excluded.add(id);
    }
  });
  return excluded;
}

/** Site keys win; `limits` and `report` are merged key by key, so a site can change one limit. */
function deviceDefaults(raw: Record<string, unknown>, placed: readonly Placed[]): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const { profile } of placed) {
    for (const [key, value] of Object.entries(profile.device)) {
      merged[key] = isMapping(value) && isMapping(merged[key]) ? { ...merged[key], ...value } : value;
    }
  }
  for (const [key, value] of Object.entries(raw)) {
    merged[key] = isMapping(value) && isMapping(merged[key]) ? { ...merged[key], ...value } : value;
  }
  return merged;
}

/** The raw device unchanged when it names no profile; otherwise with every point written out. */
export function expandProfiles(raw: unknown, path: string, issues: ConfigIssue[], library: ProfileLibrary): Expansion {
  if (!isMapping(raw) || (raw.profile === undefined && raw.exclude === undefined && raw.identify === undefined)) return { raw, labels: [] };
  const { profile: refs, exclude, identify, ...rest } = raw;
  if (identify !== undefined && typeof identify !== 'boolean') issues.push({ path: joinPath(path, 'identify'), message: `must be true or false (got ${describeValue(identify)})` });
  if (refs === undefined) {
    if (exclude !== undefined) issues.push({ path: joinPath(path, 'exclude'), message: 'only with a profile: list the points you want instead' });
    if (identify !== undefined) issues.push({ path: joinPath(path, 'identify'), message: 'only with a profile: a device without one has no model to check' });
    return { raw: rest, labels: [] };
  }
  const placed = readProfileRefs(refs, joinPath(path, 'profile'), library, issues);
  if (!placed) return { raw: rest, labels: [], unresolved: true };
  const fromProfiles = new Map<string, Record<string, unknown>>();
  const owner = new Map<string, string>();
  for (const { profile, base, prefix, at } of placed) {
    for (const point of profile.points) {
      const id = `${prefix}${point.id as string}`;
      if (owner.has(id)) {
        issues.push({ path: at, message: `point "${id}" is in both profiles "${owner.get(id)}" and "${profile.name}": give one of them a prefix, like { name: ${profile.name}, prefix: p2_ }` });
        continue;
      }
      owner.set(id, profile.name);
      const scaleFactor = typeof point.scaleFactor === 'string' ? { scaleFactor: `${prefix}${point.scaleFactor}` } : {};
      fromProfiles.set(id, { ...point, id, address: (point.address as number) + base, ...scaleFactor });
    }
  }
  const renamedPoints: RenamedPointUse[] = [];
  const rename = renamerOf(placed, renamedPoints);
  const excludes = Fields.of({ exclude }, path, issues)!;
  const excluded = readExcludes(excludes, owner, rename);
  const sitePoints = Array.isArray(rest.points) ? rest.points : [];
  if (rest.points !== undefined && !Array.isArray(rest.points)) issues.push({ path: joinPath(path, 'points'), message: `must be a list (got ${describeValue(rest.points)})` });
  const overridden = new Set<string>();
  const points: unknown[] = sitePoints.map((written, index) => {
    const renamedId = isMapping(written) ? rename(written.id, joinPath(joinPath(joinPath(path, 'points'), index), 'id')) : undefined;
    const point = isMapping(written) && renamedId !== written.id ? { ...written, id: renamedId } : written;
    const id = isMapping(point) ? point.id : undefined;
    if (typeof id !== 'string' || !fromProfiles.has(id)) return point;
    if (excluded.has(id)) issues.push({ path: joinPath(joinPath(path, 'points'), index), message: `point "${id}" is both overridden here and excluded` });
    overridden.add(id);
    return { ...fromProfiles.get(id), ...point };
  });
  const labels: (string | undefined)[] = points.map(() => undefined);
  for (const [id, point] of fromProfiles) {
    if (excluded.has(id) || overridden.has(id)) continue;
    points.push(point);
    labels.push(`${path}.profile(${owner.get(id)}).${id}`);
  }
  const identification = identify === false ? undefined : identificationOf(placed, library);
  return { raw: { ...deviceDefaults(rest, placed), points }, labels, ...(identification ? { identification } : {}), ...(renamedPoints.length > 0 ? { renamedPoints } : {}) };
}

/** The placed profiles' identification registers together, and the library's profiles read at the same registers. */
function identificationOf(placed: readonly Placed[], library: ProfileLibrary): DeviceIdentification | undefined {
  const own = placed.filter((p) => p.profile.identification);
  if (own.length === 0) return undefined;
  const registers = own.flatMap((p) => identificationAt(p.profile, p.base));
  const keys = new Set(registers.map(readKey));
  const names = new Set(own.map((p) => p.profile.name));
  const others = library.names().flatMap((name) => {
    const profile = library.get(name);
    const regs = profile?.identification ? identificationAt(profile) : undefined;
    return !names.has(name) && regs && regs.every((r) => keys.has(readKey(r))) ? [{ name, registers: regs }] : [];
  });
  return { profiles: [...names], registers, others };
}

/** Issues about points that came from a profile name the profile and point, not an index the user never wrote. */
export function relabelIssues(issues: ConfigIssue[], from: number, path: string, labels: readonly (string | undefined)[]): void {
  const prefix = `${path}.points[`;
  for (let i = from; i < issues.length; i++) {
    const issue = issues[i];
    if (!issue.path.startsWith(prefix)) continue;
    const close = issue.path.indexOf(']', prefix.length);
    const label = labels[Number(issue.path.slice(prefix.length, close))];
    if (label !== undefined) issues[i] = { path: label + issue.path.slice(close + 1), message: issue.message };
  }
}
