// `fieldgate web passwd`: sets the commissioning page's password. The password is read from
// standard input (first line), hashed with a salted scrypt, and written as
// FIELDGATE_WEB_PASSWORD_HASH into the service's environment file; the rest of the file is kept.
import { chownSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs';
import type { CliCommand, CliIo } from './io.js';
import { EXIT_USAGE } from './io.js';
import { PASSWORD_HASH_ENV } from '../core/config/web-settings.js';
import { withEnvAssignment } from '../core/env-file.js';
import { hashPassword } from '../ops/web/password.js';

const DEFAULT_ENV_FILE = '/etc/fieldgate/fieldgate.env';
const MIN_PASSWORD = 10;
const MAX_PASSWORD = 1024;

const HELP = `usage: fieldgate web passwd [--env-file PATH]

Reads the commissioning page's password from standard input (its first line, at least ${MIN_PASSWORD}
characters) and writes its salted scrypt hash as ${PASSWORD_HASH_ENV} into the environment file:
--env-file, else the last file of FIELDGATE_ENV_FILES, else ${DEFAULT_ENV_FILE}.
The daemon reads it at its next start (systemctl restart fieldgate).
`;

async function firstLine(io: CliIo): Promise<string> {
  const input = io.stdin ?? process.stdin;
  let text = '';
  for await (const chunk of input) {
    text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
    if (text.includes('\n') || text.length > MAX_PASSWORD + 2) break;
  }
  return text.split(/\r?\n/)[0];
}

export const runWeb: CliCommand = async (args, io) => {
  if (args[0] === '--help' || args[0] !== 'passwd') {
    (args[0] === '--help' ? io.stdout : io.stderr).write(HELP);
    return args[0] === '--help' ? 0 : EXIT_USAGE;
  }
  let file = (io.env.FIELDGATE_ENV_FILES ?? '').split(':').filter(Boolean).pop() ?? DEFAULT_ENV_FILE;
  const rest = args.slice(1);
  if (rest.length > 0) {
    if (rest[0] !== '--env-file' || rest.length !== 2) {
      io.stderr.write(HELP);
      return EXIT_USAGE;
    }
    file = rest[1];
  }
  const password = await firstLine(io);
  if (password.length < MIN_PASSWORD || password.length > MAX_PASSWORD) {
    io.stderr.write(`fieldgate web passwd: the password must be ${MIN_PASSWORD}..${MAX_PASSWORD} characters (read from standard input)\n`);
    return EXIT_USAGE;
  }
  // The file a symbolic link names is the one rewritten (the link stays).
  let target = file;
  let text = '';
  let existing: Stats | undefined;
  try {
    target = realpathSync(file);
    text = readFileSync(target, 'utf8');
    existing = statSync(target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      io.stderr.write(`fieldgate web passwd: cannot read ${file}: ${(err as Error).message}\n`);
      return 1;
    }
  }
  const hash = await hashPassword(password);
  // Rewritten by the rules systemd reads it with: every other variable keeps its value.
  const rewritten = withEnvAssignment(text, PASSWORD_HASH_ENV, hash);
  if (rewritten === undefined) {
    io.stderr.write(`fieldgate web passwd: ${file} cannot be rewritten without changing another variable (an unterminated quote or a continued last line?); fix its end, or add ${PASSWORD_HASH_ENV}=... yourself\n`);
    return 1;
  }
  // A new file then a rename: a crash never leaves the service's environment half written. The
  // new file keeps the old one's owner and group (a new file: the caller's) and is 0600 either
  // way: the hash can be attacked offline, and systemd reads the file as root.
  const temp = `${target}.tmp-${process.pid}`;
  try {
    writeFileSync(temp, rewritten, { mode: 0o600, flag: 'wx' });
    if (existing) {
      const made = statSync(temp);
      if (made.uid !== existing.uid || made.gid !== existing.gid) chownSync(temp, existing.uid, existing.gid);
    }
    renameSync(temp, target);
  } catch (err) {
    rmSync(temp, { force: true });
    io.stderr.write(`fieldgate web passwd: cannot write ${file}: ${(err as Error).message}\n`);
    return 1;
  }
  io.stdout.write(`${PASSWORD_HASH_ENV} written to ${file}; restart fieldgate to use it\n`);
  return 0;
};
