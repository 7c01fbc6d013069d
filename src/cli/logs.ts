// `fieldgate logs`: the service's journal (journalctl -u fieldgate -o cat) made readable with the
// pino-pretty the package carries, so reading logs on the box needs nothing from the network.
import { spawn } from 'node:child_process';
import { createReadStream, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { prettyFactory } from 'pino-pretty';
import { levelNumber, parseLogLine, wanted, type LogFilter } from '../core/log-filter.js';
import { EXIT_UNAVAILABLE, EXIT_USAGE, type CliCommand, type CliIo, wantsHelp } from './io.js';

const USAGE = `usage: fieldgate logs [--follow] [--device NAME] [--level LEVEL] [--lines N] [--unit UNIT] [--input FILE|-] [--json]
  --follow, -f    keep printing new lines (journalctl --follow)
  --device NAME   only lines of this device
  --level LEVEL   only lines at this level or above (trace, debug, info, warn, error, fatal)
  --lines N       start with the last N lines (default: the whole journal, or 50 with --follow)
  --unit UNIT     the systemd unit (default fieldgate)
  --input FILE    read JSON log lines from FILE (- for standard input) instead of the journal
  --json          print the kept lines as they are (JSON), not pretty
Reading the journal needs root or the systemd-journal/adm group. Where there is no journal
(journald off, a container), it says so and exits 69: use --input.
`;

/** journald's persistent and volatile directories (one subdirectory per machine id). */
export const JOURNAL_DIRS = ['/var/log/journal', '/run/log/journal'];

/**
 * Whether journald keeps any journal file here. A directory that cannot be listed counts as
 * one (journalctl, run with the caller's rights, then says what it finds).
 */
export function journalExists(dirs: readonly string[] = JOURNAL_DIRS): boolean {
  const look = (dir: string, depth: number): boolean => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EACCES';
    }
    return entries.some((e) => (e.isFile() && /\.journal~?$/.test(e.name)) || (depth < 1 && e.isDirectory() && look(join(dir, e.name), depth + 1)));
  };
  return dirs.some((dir) => look(dir, 0));
}

const NO_JOURNAL = `no systemd journal on this machine (journald keeps no files in ${JOURNAL_DIRS.join(' or ')}); read a saved log instead: fieldgate logs --input FILE (or --input - for standard input)`;

const OPTIONS = {
  follow: { type: 'boolean', short: 'f' }, device: { type: 'string' }, level: { type: 'string' }, lines: { type: 'string' },
  unit: { type: 'string', default: 'fieldgate' }, input: { type: 'string' }, json: { type: 'boolean' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; args: string[] }>>['values'];

function journalArgs(values: Values): string[] {
  const args = ['-u', values.unit ?? 'fieldgate', '-o', 'cat', '--no-pager'];
  if (values.follow) args.push('--follow');
  const lines = values.lines ?? (values.follow ? '50' : undefined);
  if (lines !== undefined) args.push('--lines', lines);
  return args;
}

/**
 * Copies the wanted lines of `input` to stdout, pretty or as JSON; resolves at the input's end,
 * or when the reader of stdout has gone (EPIPE: `fieldgate logs | head` is a normal end).
 */
async function copyLines(input: Readable, filter: LogFilter, json: boolean, io: CliIo): Promise<void> {
  const pretty = prettyFactory({ colorize: io.env.NO_COLOR === undefined && Boolean((io.stdout as { isTTY?: boolean }).isTTY), translateTime: 'SYS:standard', ignore: 'pid,hostname' });
  let readerGone = false;
  const lines = createInterface({ input, crlfDelay: Infinity });
  const onError = (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
    readerGone = true;
    lines.close();
    input.destroy();
  };
  io.stdout.on('error', onError);
  try {
    for await (const line of lines) {
      if (readerGone) break;
      const parsed = parseLogLine(line);
      if (!wanted(parsed, filter)) continue;
      io.stdout.write(parsed.kind === 'text' || json ? `${line}\n` : pretty(parsed.entry));
    }
  } finally {
    // Kept while the process lives: a late EPIPE of the last write must not crash it either.
    if (!readerGone) io.stdout.removeListener('error', onError);
  }
}

export const runLogs: CliCommand = async (args, io) => {
  if (wantsHelp(args)) {
    io.stdout.write(USAGE);
    return 0;
  }
  let values: Values;
  try {
    values = parseArgs({ args, options: OPTIONS, strict: true }).values;
    if (values.lines !== undefined && !/^\d+$/.test(values.lines)) throw new Error(`--lines must be a whole number, got "${values.lines}"`);
    if (values.level !== undefined && levelNumber(values.level) === undefined) throw new Error(`--level must be trace, debug, info, warn, error or fatal, got "${values.level}"`);
    if (values.input !== undefined && values.follow) throw new Error('--follow reads the journal; it does not go with --input');
  } catch (err) {
    io.stderr.write(`fieldgate logs: ${(err as Error).message}\n${USAGE}`);
    return EXIT_USAGE;
  }
  const filter: LogFilter = { device: values.device, minLevel: values.level === undefined ? undefined : levelNumber(values.level) };
  if (values.input !== undefined) {
    const input = values.input === '-' ? process.stdin : createReadStream(values.input);
    try {
      await copyLines(input, filter, values.json ?? false, io);
      return 0;
    } catch (err) {
      io.stderr.write(`fieldgate logs: cannot read ${values.input}: ${(err as Error).message}\n`);
      return EXIT_UNAVAILABLE;
    }
  }
  if (!journalExists()) {
    io.stderr.write(`fieldgate logs: ${NO_JOURNAL}\n`);
    return EXIT_UNAVAILABLE;
  }
  const journal = spawn('journalctl', journalArgs(values), { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  journal.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const exited = new Promise<number | null>((resolve) => {
    journal.once('error', (err) => { stderr += err.message; resolve(null); });
    journal.once('close', (code) => resolve(code));
  });
  await copyLines(journal.stdout, filter, values.json ?? false, io);
  if (!journal.stdout.readableEnded) journal.kill();
  const code = await exited;
  if (/No journal files were found/.test(stderr) || (code === null && /ENOENT/.test(stderr))) {
    io.stderr.write(`fieldgate logs: ${code === null ? 'journalctl is not installed, so ' : ''}${NO_JOURNAL}\n`);
    return EXIT_UNAVAILABLE;
  }
  if (code === 0 || journal.signalCode === 'SIGTERM') return 0;
  io.stderr.write(`fieldgate logs: journalctl ${journalArgs(values).join(' ')} failed (${code === null ? 'not started' : `exit ${code}`}): ${stderr.trim()}\n`);
  return EXIT_UNAVAILABLE;
};
