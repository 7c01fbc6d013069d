// `fieldgate profiles [show NAME]`: the device profiles a site file can name, and one profile's points.
import { parseArgs } from 'node:util';
import type { DeviceProfile } from '../core/config/profile-types.js';
import { formatIssue } from '../core/config/issues.js';
import { DEFAULT_PROFILE_DIR } from '../core/config/schema.js';
import { loadProfiles, SHIPPED_PROFILE_DIR } from '../ops/profile-library.js';
import { EXIT_CONFIG, EXIT_USAGE, type CliCommand } from './io.js';
import { formatTable } from './status.js';
import { checkProfileFile } from './profiles-check.js';

const USAGE = `usage: fieldgate profiles [--profile-dir DIR...]            list the profiles (SOURCE: primary = read in the
                                                        manufacturer's document, secondary = it could not be read)
       fieldgate profiles show NAME [--profile-dir DIR...]  print one profile's points
       fieldgate profiles check FILE                         check a site's own profile file (NAME.yaml) as the
                                                        daemon loads it: every problem with its path, exit 78
                                                        on problems, 0 when fine

  --profile-dir DIR   a site's own profiles, as gateway.profileDirs (repeatable; default ${DEFAULT_PROFILE_DIR})
`;

function text(value: unknown): string {
  return value === undefined ? '' : String(value);
}

/** Bounds as the site file would write them: "0..60", "..100" or "" when none. */
function bounds(point: Readonly<Record<string, unknown>>): string {
  if (point.writable !== true) return 'no';
  if (point.min === undefined && point.max === undefined) return 'yes';
  return `yes ${text(point.min)}..${text(point.max)}`;
}

function showProfile(profile: DeviceProfile, overridden: boolean): string {
  const base = profile.sunspec?.defaultAddress ?? 0;
  const device = Object.entries(profile.device).map(([key, value]) => `${key}=${JSON.stringify(value)}`).join(', ');
  const head = [
    `${profile.name}: ${profile.vendor} ${profile.model}${profile.firmware ? `, firmware ${profile.firmware}` : ''}`,
    `file: ${profile.file}${overridden ? ' (a site profile replacing the shipped one)' : ''}`,
    `source: ${profile.source.title}, ${profile.source.version}; ${profile.source.table}`,
    ...(profile.source.quality === 'secondary' ? ['source quality: secondary (the manufacturer\'s document could not be read; see notes)'] : []),
    ...(profile.source.url ? [`url: ${profile.source.url}`] : []),
    ...(profile.source.notes ? [`notes: ${profile.source.notes}`] : []),
    ...(profile.identification ? [`identification: ${profile.identification.registers.map((r) => `${r.label}: ${r.point.table} ${r.point.address + (profile.sunspec ? base : 0)} = ${r.values.map((v) => JSON.stringify(v)).join(' or ')}`).join('; ')}`] : []),
    ...(profile.sunspec ? [`SunSpec model ${profile.sunspec.model}, length ${profile.sunspec.length}, usually at ${base} (place elsewhere with { name, address })`] : []),
    ...(device ? [`device defaults: ${device}`] : []),
    '',
  ];
  const rows = profile.points.map((point) => [
    text(point.id), text(point.table), (point.address as number) + base, text(point.type ?? 'uint16') + (point.type === 'string' ? `[${text(point.length)}]` : ''),
    point.scaleFactor !== undefined ? `10^${text(point.scaleFactor)}` : text(point.scale ?? 1), text(point.unit), bounds(point),
    point.notImplemented !== undefined ? `absent when ${typeof point.notImplemented === 'string' ? 'empty' : text(point.notImplemented)}` : '',
  ]);
  return `${head.join('\n')}${formatTable(['ID', 'TABLE', 'ADDRESS', 'TYPE', 'SCALE', 'UNIT', 'WRITABLE', 'NOTE'], rows)}\n`;
}

export const runProfiles: CliCommand = async (args, io) => {
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: { 'profile-dir': { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } }, strict: true });
    const [verb, name, ...extra] = parsed.positionals;
    if (parsed.values.help) {
      io.stdout.write(USAGE);
      return 0;
    }
    if ((verb !== undefined && verb !== 'show' && verb !== 'check') || ((verb === 'show' || verb === 'check') && name === undefined) || extra.length > 0 || (verb === undefined && name !== undefined)) {
      throw new Error(verb === 'show' ? 'show needs exactly one profile name' : verb === 'check' ? 'check needs exactly one profile file' : `unknown sub-command "${verb}"`);
    }
  } catch (err) {
    io.stderr.write(`fieldgate profiles: ${(err as Error).message}\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (parsed.positionals[0] === 'check') return checkProfileFile(parsed.positionals[1], io);
  const loaded = loadProfiles(parsed.values['profile-dir'] ?? [DEFAULT_PROFILE_DIR]);
  // A broken profile is reported but does not hide the good ones.
  for (const issue of loaded.issues) io.stderr.write(`${formatIssue(issue)}\n`);
  const overridden = new Set(loaded.overrides.map((o) => o.name));
  const [verb, name] = parsed.positionals;
  if (verb === 'show') {
    const profile = loaded.library.get(name);
    if (!profile) {
      io.stderr.write(`fieldgate profiles: unknown profile "${name}"; \`fieldgate profiles\` lists them\n`);
      return EXIT_USAGE;
    }
    io.stdout.write(showProfile(profile, overridden.has(name)));
    return loaded.issues.length > 0 ? EXIT_CONFIG : 0;
  }
  const rows = loaded.library.names().map((n) => {
    const profile = loaded.library.get(n)!;
    // Where the file the daemon would use lies: a site's own profile is the site's, new or replacing.
    return [n, profile.vendor, profile.model, profile.points.length, profile.source.quality, profile.file.startsWith(SHIPPED_PROFILE_DIR) ? 'shipped' : 'site'];
  });
  io.stdout.write(`${formatTable(['NAME', 'VENDOR', 'MODEL', 'POINTS', 'SOURCE', 'FROM'], rows)}\n`);
  return loaded.issues.length > 0 ? EXIT_CONFIG : 0;
};
