// `fieldgate web passwd`: sets the commissioning page's password. The password is read from
// standard input (first line), hashed with a salted scrypt, and written as
// FIELDGATE_WEB_PASSWORD_HASH into the service's environment file; the rest of the file is kept.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { CliCommand, CliIo } from './io.js';
import { EXIT_USAGE } from './io.js';
import { PASSWORD_HASH_ENV } from '../core/config/web-settings.js';
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

/** The file with every line assigning `name` replaced by one new assignment at the end. */
export function withVariable(text: string, name: string, value: string): string {
  const kept = text.split('\n').filter((line) => !new RegExp(`^\\s*(export\\s+)?${name}\\s*=`).test(line));
  while (kept.length > 0 && kept[kept.length - 1] === '') kept.pop();
  return [...kept, `${name}=${value}`, ''].join('\n');
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
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      io.stderr.write(`fieldgate web passwd: cannot read ${file}: ${(err as Error).message}\n`);
      return 1;
    }
  }
  const hash = await hashPassword(password);
  try {
    // A new file then a rename: a crash never leaves the service's environment half written.
    const temp = `${file}.tmp-${process.pid}`;
    writeFileSync(temp, withVariable(text, PASSWORD_HASH_ENV, hash), { mode: 0o600 });
    renameSync(temp, file);
  } catch (err) {
    io.stderr.write(`fieldgate web passwd: cannot write ${file}: ${(err as Error).message}\n`);
    return 1;
  }
  io.stdout.write(`${PASSWORD_HASH_ENV} written to ${file}; restart fieldgate to use it\n`);
  return 0;
};
