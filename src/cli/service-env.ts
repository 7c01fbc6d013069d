// The service's environment for the `fieldgate` command: the package's wrapper names the unit's
// environment files in FIELDGATE_ENV_FILES (colon-separated, read in order, a later file winning
// as with systemd's EnvironmentFile= lines), and they are read with the parser systemd's rules
// are tested against (core/env-file.ts). Variables already set in the caller's environment win.
import { readFileSync } from 'node:fs';
import { parseEnvFile } from '../core/env-file.js';

/** A file larger than this is not an environment file: it is not read. */
const MAX_ENV_FILE_BYTES = 1024 * 1024;

/**
 * Sets in `env` the variables of the files it names that `env` does not set yet. A missing or
 * unreadable file is skipped (the secrets file is root's only: `status` works without it).
 */
export function applyServiceEnv(env: NodeJS.ProcessEnv, read: (path: string) => string = (p) => readFileSync(p, 'utf8')): void {
  const files = (env.FIELDGATE_ENV_FILES ?? '').split(':').filter((f) => f !== '');
  const fromFiles: Record<string, string> = {};
  for (const file of files) {
    let text: string;
    try {
      text = read(file);
    } catch {
      continue;
    }
    if (text.length > MAX_ENV_FILE_BYTES) continue;
    Object.assign(fromFiles, parseEnvFile(text));
  }
  for (const [name, value] of Object.entries(fromFiles)) {
    if (env[name] === undefined) env[name] = value;
  }
}
