// A site-file device block naming profiles (pure): what `scan --sunspec` and `simulate --profile` print.

import type { DeviceProfile } from './profile-types.js';

export interface ProfileRef {
  name: string;
  /** Present only when the model is not where the profile usually expects it. */
  address?: number;
  /** Present only when the profile's point ids would clash with an earlier profile's. */
  prefix?: string;
}

/**
 * References for profiles served together: SunSpec point names are unique only within a model
 * (models 103 and 160 both have DCA_SF), so a profile whose ids clash with earlier ones gets a prefix.
 */
export function profileRefs(entries: readonly { profile: DeviceProfile; address: number }[]): ProfileRef[] {
  const seen = new Set<string>();
  return entries.map(({ profile, address }, index) => {
    const ids = profile.points.map((point) => point.id as string);
    const prefix = ids.some((id) => seen.has(id)) ? `${profile.sunspec ? `m${profile.sunspec.model}` : `p${index + 1}`}_` : '';
    for (const id of ids) seen.add(`${prefix}${id}`);
    return {
      name: profile.name,
      ...(profile.sunspec && profile.sunspec.defaultAddress !== address ? { address } : {}),
      ...(prefix ? { prefix } : {}),
    };
  });
}

export function deviceBlock(unit: number, refs: readonly ProfileRef[], bus: string): string {
  const written = refs.map((ref) => {
    if (ref.address === undefined && ref.prefix === undefined) return ref.name;
    const keys = [`name: ${ref.name}`, ...(ref.address !== undefined ? [`address: ${ref.address}`] : []), ...(ref.prefix !== undefined ? [`prefix: ${ref.prefix}`] : [])];
    return `{ ${keys.join(', ')} }`;
  });
  const profile = written.length === 1 ? written[0] : `[${written.join(', ')}]`;
  return [`  - name: unit-${unit}`, `    bus: ${bus}`, `    unitId: ${unit}`, `    profile: ${profile}`].join('\n');
}
