// A simulated unit serving device profiles: every point with a plausible value, and for SunSpec
// profiles the SunS marker and a walkable model chain (common model first).
import { deviceBlock, identificationAt, profileRefs, type DeviceProfile, type ProfileLibrary } from 'fieldgate/workspace-kit';
import { encodeTyped, type SimValueType } from './encode.js';
import type { InitialValues, SimUnitSpec } from './map-file.js';
import { plausibleValues, profilePoints, type HeldValue } from './profile-values.js';

/** Where the chain starts: the SunS marker (two registers), then the first model's ID register. */
export const SUNSPEC_BASE = 40000;
const SUNS_MARKER = [0x5375, 0x6e53];
const END_OF_CHAIN = [0xffff, 0];

export interface Placement {
  profile: DeviceProfile;
  /** Address added to the profile's point addresses (the model's ID register for SunSpec). */
  base: number;
  /** Put before the profile's point ids when they clash with an earlier profile's. */
  prefix: string;
}

export interface ProfileUnit {
  spec: SimUnitSpec;
  placements: Placement[];
  held: HeldValue[];
}

/** The profiles to serve, SunSpec ones after the common model and back to back from 40002. */
export function placeProfiles(names: readonly string[], library: ProfileLibrary): { placements: Placement[]; problems: string[] } {
  const problems: string[] = [];
  const profiles = names.flatMap((name) => {
    const profile = library.get(name);
    if (!profile) problems.push(`unknown profile "${name}" (known: ${library.names().join(', ')})`);
    return profile ? [profile] : [];
  });
  const models = profiles.filter((p) => p.sunspec && p.sunspec.model !== 1);
  const common = profiles.find((p) => p.sunspec?.model === 1) ?? library.get('sunspec-common');
  if (models.length > 0 && !common) problems.push('SunSpec profiles need the sunspec-common profile for the chain');
  const sunspec = common && (models.length > 0 || profiles.includes(common)) ? [common, ...models] : models;
  const placed = profiles.filter((p) => !p.sunspec).map((profile) => ({ profile, address: 0 }));
  let next = SUNSPEC_BASE + SUNS_MARKER.length;
  for (const profile of sunspec) {
    placed.push({ profile, address: next });
    next += 2 + profile.sunspec!.length;
  }
  const refs = profileRefs(placed);
  return { placements: placed.map(({ profile, address }, i) => ({ profile, base: address, prefix: refs[i].prefix ?? '' })), problems };
}

function wordsOf(held: HeldValue): number[] {
  const { point, raw } = held;
  if (typeof raw === 'boolean') return [raw ? 1 : 0];
  const encoded = encodeTyped({
    type: point.type as SimValueType, value: raw, wordOrder: point.wordOrder, byteOrder: point.byteOrder,
    ...(point.type === 'string' ? { registers: point.length } : {}),
  });
  if (!encoded.ok) throw new Error(`point "${point.id}": ${encoded.error}`);
  return encoded.words;
}

export function profileUnit(unit: number, placements: readonly Placement[]): ProfileUnit {
  const values: InitialValues[] = [];
  const held: HeldValue[] = [];
  const sunspec = placements.filter((p) => p.profile.sunspec);
  if (sunspec.length > 0) {
    values.push({ table: 'holding', address: SUNSPEC_BASE, words: SUNS_MARKER });
    for (const { profile, base } of sunspec) values.push({ table: 'holding', address: base, words: [profile.sunspec!.model, profile.sunspec!.length] });
    const last = sunspec[sunspec.length - 1];
    values.push({ table: 'holding', address: last.base + 2 + last.profile.sunspec!.length, words: END_OF_CHAIN });
  }
  for (const { profile, base, prefix } of placements) {
    const identification = identificationAt(profile, base);
    for (const plausible of plausibleValues(profilePoints(profile, base, prefix))) {
      const value = asIdentified(plausible, identification);
      held.push(value);
      values.push({ table: value.point.table, address: value.point.address, words: wordsOf(value) });
    }
  }
  values.push(...identificationValues(placements));
  const name = placements.map((p) => p.profile.name).join(' + ');
  return { spec: { unit, name, sizes: {}, values, dynamic: [] }, placements: [...placements], held };
}

/**
 * A point that is also one of its profile's identification registers (a device type code read as a
 * value) holds what the identification register holds, the first value the model shows, so the
 * unit serves one value there and the point decodes to it.
 */
function asIdentified(value: HeldValue, registers: ReturnType<typeof identificationAt>): HeldValue {
  const { point } = value;
  const register = registers.find((r) => r.point.table === point.table && r.point.address === point.address && r.point.type === point.type);
  if (!register || point.scale !== 1 || point.scaleFactor !== undefined) return value;
  const shown = register.values[0];
  return { point, raw: shown, expected: shown };
}

/** Each profile's identification registers holding the first value its model shows (the right model). */
function identificationValues(placements: readonly Placement[]): InitialValues[] {
  return placements.flatMap(({ profile, base }) => identificationAt(profile, base).map((register) => {
    const { point } = register;
    const encoded = encodeTyped({
      type: point.type as SimValueType, value: register.values[0], wordOrder: point.wordOrder, byteOrder: point.byteOrder,
      ...(point.type === 'string' ? { registers: point.length } : {}),
    });
    if (!encoded.ok) throw new Error(`profile "${profile.name}" identification "${register.label}": ${encoded.error}`);
    return { table: point.table, address: point.address, words: encoded.words, ...(register.readAlone ? { alone: true } : {}) };
  }));
}

/** The device block a site file needs for this unit (placed addresses only where they differ from the default). */
export function siteDeviceBlock(unit: number, placements: readonly Placement[], bus = 'bus1'): string {
  return deviceBlock(unit, profileRefs(placements.map(({ profile, base }) => ({ profile, address: base }))), bus);
}
