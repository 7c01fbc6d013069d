// Device profiles from disk: the shipped profiles/ directory, then each of gateway.profileDirs
// (a site's profile of the same name replaces the shipped one). Every broken file is an issue.
import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { readProfileDoc } from '../core/config/profile-doc.js';
import { libraryOf, type DeviceProfile, type ProfileLibrary } from '../core/config/profile-types.js';
import { DEFAULT_PROFILE_DIR } from '../core/config/schema.js';
import type { ConfigIssue, ProfileOverride } from '../core/config/site-types.js';

/** profiles/ next to src/ and dist/: the same place in a checkout, the service install and the package. */
export const SHIPPED_PROFILE_DIR = fileURLToPath(new URL('../../profiles/', import.meta.url));

/** A profile of a few hundred points is ~30 KB; a larger file is not a profile. */
const MAX_PROFILE_BYTES = 1 << 20;

export interface LoadedProfiles {
  library: ProfileLibrary;
  overrides: ProfileOverride[];
  issues: ConfigIssue[];
}

/** The file's size is checked on the open descriptor first, so a huge file is never read or buffered. */
function readBounded(file: string): string {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_PROFILE_BYTES) throw new Error(`larger than ${MAX_PROFILE_BYTES} bytes`);
    const buffer = Buffer.alloc(size);
    const read = readSync(fd, buffer, 0, size, 0);
    return buffer.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** The profiles of one directory; `undefined` when it does not exist. */
function readDirectory(dir: string, issues: ConfigIssue[]): DeviceProfile[] | undefined {
  let names: string[];
  try {
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    names = readdirSync(dir).filter((name) => name.endsWith('.yaml')).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    issues.push({ path: dir, message: `cannot read the profile directory (${(err as Error).message})` });
    return [];
  }
  const profiles: DeviceProfile[] = [];
  for (const name of names) {
    const profile = readProfileFile(join(dir, name), issues);
    if (profile) profiles.push(profile);
  }
  return profiles;
}

/** One profile file (NAME.yaml holds profile NAME), checked; every problem goes to `issues`. */
export function readProfileFile(file: string, issues: ConfigIssue[]): DeviceProfile | undefined {
  let raw: unknown;
  try {
    raw = parse(readBounded(file), { maxAliasCount: 100 });
  } catch (err) {
    issues.push({ path: file, message: `not a readable profile (${(err as Error).message.split('\n')[0]})` });
    return undefined;
  }
  return readProfileDoc(raw, basename(file).replace(/\.yaml$/, ''), file, issues);
}

/** `siteDirs`: gateway.profileDirs. A missing default directory is normal; a missing listed one is an issue. */
export function loadProfiles(siteDirs: readonly string[], shippedDir = SHIPPED_PROFILE_DIR): LoadedProfiles {
  const issues: ConfigIssue[] = [];
  const shipped = readDirectory(shippedDir, issues) ?? [];
  if (shipped.length === 0) issues.push({ path: shippedDir, message: 'no shipped profiles found: the installation is incomplete' });
  const byName = new Map(shipped.map((profile) => [profile.name, profile]));
  const fromSite = new Map<string, DeviceProfile>();
  const overrides: ProfileOverride[] = [];
  siteDirs.forEach((dir, index) => {
    const profiles = readDirectory(dir, issues);
    if (profiles === undefined && dir !== DEFAULT_PROFILE_DIR) issues.push({ path: `gateway.profileDirs[${index}]`, message: `directory ${JSON.stringify(dir)} not found` });
    for (const profile of profiles ?? []) {
      const earlier = fromSite.get(profile.name);
      if (earlier) {
        issues.push({ path: profile.file, message: `profile "${profile.name}" is also defined in ${earlier.file}: keep one` });
        continue;
      }
      const replaced = byName.get(profile.name);
      if (replaced) overrides.push({ name: profile.name, file: profile.file, shipped: replaced.file });
      fromSite.set(profile.name, profile);
      byName.set(profile.name, profile);
    }
  });
  return { library: libraryOf(byName.values()), overrides, issues };
}
