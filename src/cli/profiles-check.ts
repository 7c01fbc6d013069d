// `fieldgate profiles check FILE`: a site's own profile checked as the daemon would load it, every
// problem at once with its path (schema, overlapping points, source, identification); a point that
// names a vocabulary quantity otherwise (or in another unit) is a warning with the vocabulary's name.
import { basename, resolve } from 'node:path';
import { formatIssue } from '../core/config/issues.js';
import { checkVocabulary } from '../core/config/point-vocabulary.js';
import type { ConfigIssue } from '../core/config/site-types.js';
import { SHIPPED_PROFILE_DIR, loadProfiles, readProfileFile } from '../ops/profile-library.js';
import { EXIT_CONFIG, type CliIo } from './io.js';

export async function checkProfileFile(file: string, io: CliIo): Promise<number> {
  const issues: ConfigIssue[] = [];
  if (!file.endsWith('.yaml')) issues.push({ path: file, message: 'a profile file is named after its profile: NAME.yaml' });
  const profile = readProfileFile(file, issues);
  if (issues.length > 0 || !profile) {
    for (const issue of issues) io.stdout.write(`${formatIssue(issue)}\n`);
    io.stderr.write(`fieldgate profiles check: ${issues.length} problem${issues.length === 1 ? '' : 's'} in ${file}\n`);
    return EXIT_CONFIG;
  }
  const shipped = loadProfiles([], SHIPPED_PROFILE_DIR).library.get(profile.name);
  const registers = profile.identification?.registers.length ?? 0;
  const vocabulary = checkVocabulary(profile.points);
  io.stdout.write([
    `${basename(file)}: profile ${profile.name} is well-formed`,
    `  ${profile.points.length} point(s); source ${profile.source.quality}: ${profile.source.title}, ${profile.source.version}`,
    `  identification: ${registers > 0 ? `${registers} register(s) (${profile.identification!.registers.map((r) => r.label).join('; ')})` : 'none (the daemon cannot tell this model from another)'}`,
    ...vocabulary.map((finding) => `  warning: profile ${profile.name}.points[${finding.index}] (${finding.id}): ${finding.message}`),
    ...(shipped && resolve(shipped.file) !== resolve(profile.file) ? [`  note: a site directory holding it replaces the shipped profile ${profile.name} (${shipped.file})`] : []),
  ].join('\n') + '\n');
  return 0;
}
