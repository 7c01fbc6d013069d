// `fieldgate reload --config SITE`: checks the site file as `run` would, signals the running
// daemon (SIGHUP) and waits for its answer in <stateDir>/config-state.json (ops/config-state.ts).
// Exit 0 when applied or unchanged, 78 when the file or the daemon refused it (problems printed),
// 69 when no daemon answers, 70 when applying failed part-way (rolled back: the running config is
// unchanged), 75 when the daemon read other bytes than the ones checked here (the
// file changed meanwhile: the sha256 of both is printed). systemd's ExecReload runs it, so
// `systemctl reload` waits too.
import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CONFIG_STATE_FILE, type ConfigStateFile } from '../ops/config-state.js';
import type { GatewayStatus } from '../ops/status.js';
import { EXIT_CONFIG, EXIT_SOFTWARE, EXIT_TEMPFAIL, EXIT_UNAVAILABLE, EXIT_USAGE, type CliCommand, type CliIo, wantsHelp } from './io.js';
import { stateLockHolder } from './lock-holder.js';
import { readSiteForRun, reportIssues } from './site-loading.js';

const USAGE = `usage: fieldgate reload --config SITE.yaml [--pid PID] [--timeout-ms MS]
  --config      the site file the daemon runs (or FIELDGATE_CONFIG)
  --pid         the daemon's process id (default: the process holding <stateDir>/fieldgate.lock)
  --timeout-ms  how long to wait for the daemon's answer (default 60000)
`;

const POLL_MS = 100;

function readState(stateDir: string): ConfigStateFile | undefined {
  try {
    return JSON.parse(readFileSync(join(stateDir, CONFIG_STATE_FILE), 'utf8')) as ConfigStateFile;
  } catch {
    return undefined;
  }
}

/** Why `pid` cannot be signalled, or undefined when it can. */
function signalProblem(pid: number, signal: NodeJS.Signals | 0): string | undefined {
  try {
    process.kill(pid, signal);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') return `no process ${pid}: is fieldgate running?`;
    if (code === 'EPERM') return `not allowed to signal process ${pid}: run as the daemon's user or root`;
    return `cannot signal process ${pid}: ${code ?? String(err)}`;
  }
}

/** What the daemon answered, read from the state file or, when that is elsewhere, from /status. */
type Answer = Pick<ConfigStateFile, 'pid' | 'attempt' | 'outcome' | 'generation' | 'sha256' | 'problems'>;

/** The daemon's answer through its health endpoint (its state directory is not the new file's). */
async function readStatusAnswer(port: number): Promise<Answer | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/status`, { signal: AbortSignal.timeout(5000) });
    const status = (await res.json()) as GatewayStatus;
    if (!status.config || status.pid === undefined) return undefined;
    const { reloads, lastError } = status.config;
    const lastRefused = lastError !== null;
    return {
      pid: status.pid, attempt: reloads.applied + reloads.unchanged + reloads.refused + (reloads.failed ?? 0), outcome: lastRefused ? 'refused' : 'applied',
      generation: status.config.generation, sha256: status.config.sha256, problems: lastRefused ? [{ path: 'reload', message: lastError }] : [],
    };
  } catch {
    return undefined;
  }
}

/**
 * Without --pid, the process signalled is the one holding the state directory's lock (only
 * `fieldgate run` takes it; a PID in a file may be stale, reused or written by another), its
 * command line must still say `run`, and it must run this command's Node runtime. The PID, or why
 * no process is signalled.
 */
function daemonPid(stateDir: string, named: number | undefined): { pid: number } | { problem: string } {
  const holder = stateLockHolder(stateDir);
  if ('problem' in holder) return holder;
  if ('none' in holder) {
    if (named === undefined) return { problem: `no running daemon found (${join(stateDir, CONFIG_STATE_FILE)} is missing); is fieldgate running?` };
    return { problem: `process ${named} (from a stale ${CONFIG_STATE_FILE}?) does not hold the state lock (${holder.none}), so it is not a fieldgate daemon; give --pid` };
  }
  let args: string[] = [];
  try {
    args = readFileSync(`/proc/${holder.pid}/cmdline`, 'utf8').split('\0');
  } catch {
    // gone since: signalProblem says so
  }
  if (!args.includes('run')) return { problem: `process ${holder.pid} holds ${holder.path} but does not run fieldgate's daemon (${args.join(' ').slice(0, 200)}); give --pid` };
  const runtime = runtimeOf(holder.pid);
  if ('problem' in runtime) return runtime;
  if (runtime.exe !== undefined && runtime.exe !== realpathSync(process.execPath)) {
    return { problem: `process ${holder.pid} holds ${holder.path} but runs ${runtime.exe}, not this fieldgate's runtime (${realpathSync(process.execPath)}); give --pid` };
  }
  return { pid: holder.pid };
}

/**
 * The program a process runs. The daemon and this command run the same Node runtime (the unit and
 * the wrapper both run /usr/lib/fieldgate/current), so a process of another program that took the
 * lock is never signalled. `exe` undefined: the process is gone (signalling says so).
 */
function runtimeOf(pid: number): { exe: string | undefined } | { problem: string } {
  try {
    return { exe: realpathSync(`/proc/${pid}/exe`) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { exe: undefined };
    return { problem: `cannot tell which program process ${pid} runs (/proc/${pid}/exe: ${code ?? String(err)}); run as root or give --pid` };
  }
}

/** The daemon's answer; `checked`: the sha256 of the bytes this command validated. */
function answer(state: Answer, io: CliIo, file: string, checked: string | undefined): number {
  if (state.outcome === 'refused') {
    reportIssues(state.problems, file, io, 'reload', `refused by the daemon, generation ${state.generation} keeps running`);
    return EXIT_CONFIG;
  }
  if (state.outcome === 'failed') {
    reportIssues(state.problems, file, io, 'reload', `failed in the daemon, generation ${state.generation} keeps running (see its log)`);
    return EXIT_SOFTWARE;
  }
  if (checked !== undefined && state.sha256 !== checked) {
    // The daemon read the file again after this check (rewritten in place, or replaced meanwhile).
    io.stderr.write(`fieldgate reload: ${file}: the daemon ${state.outcome === 'applied' ? 'applied' : 'read'} site file sha256 ${state.sha256}, not the one checked here (sha256 ${checked}): `
      + `the file changed during the reload; generation ${state.generation} runs what the daemon read. Check the file and reload again\n`);
    return EXIT_TEMPFAIL;
  }
  const what = state.outcome === 'applied' ? 'reloaded' : 'no changes';
  io.stdout.write(`fieldgate reload: ${what}; generation ${state.generation}, sha256 ${state.sha256} (the file checked)\n`);
  return 0;
}

export const runReload: CliCommand = async (args, io) => {
  if (wantsHelp(args)) {
    io.stdout.write(USAGE);
    return 0;
  }
  let values;
  try {
    values = parseArgs({ args, options: { config: { type: 'string', short: 'c' }, pid: { type: 'string' }, 'timeout-ms': { type: 'string' } }, strict: true }).values;
  } catch (err) {
    io.stderr.write(`fieldgate reload: ${(err as Error).message}\n${USAGE}`);
    return EXIT_USAGE;
  }
  const file = values.config ?? io.env.FIELDGATE_CONFIG;
  const timeoutMs = Number(values['timeout-ms'] ?? 60_000);
  const givenPid = values.pid === undefined ? undefined : Number(values.pid);
  if (!file || !(timeoutMs > 0) || (givenPid !== undefined && !(Number.isInteger(givenPid) && givenPid > 0))) {
    io.stderr.write(`fieldgate reload: ${!file ? 'no site file given' : 'bad --pid or --timeout-ms'}\n${USAGE}`);
    return EXIT_USAGE;
  }
  // Checked here first: a broken file is reported without bothering the daemon.
  const loaded = readSiteForRun(file, io.env);
  if (!loaded.config) {
    reportIssues(loaded.issues, file, io, 'reload', 'nothing sent to the daemon');
    return EXIT_CONFIG;
  }
  const { stateDir, health } = loaded.config.gateway;
  const inStateDir = readState(stateDir);
  const found = givenPid === undefined ? daemonPid(stateDir, inStateDir?.pid) : { pid: givenPid };
  if ('problem' in found) {
    io.stderr.write(`fieldgate reload: ${found.problem}\n`);
    return EXIT_UNAVAILABLE;
  }
  const { pid } = found;
  // A file that moves the state directory (which a reload refuses) is answered through /status.
  const read = inStateDir?.pid === pid ? async () => readState(stateDir) : health.enabled ? () => readStatusAnswer(health.port) : undefined;
  const before = await read?.();
  const attemptBefore = before?.pid === pid ? before.attempt : -1;
  const problem = signalProblem(pid, 'SIGHUP');
  if (problem) {
    io.stderr.write(`fieldgate reload: ${problem}\n`);
    return EXIT_UNAVAILABLE;
  }
  if (!read) {
    io.stderr.write(`fieldgate reload: signalled process ${pid}, but its answer cannot be read (no ${join(stateDir, CONFIG_STATE_FILE)} of it, health endpoint off); see its log\n`);
    return EXIT_UNAVAILABLE;
  }
  // Monotonic: a wall-clock step while the daemon reloads neither ends nor stretches the wait.
  const until = performance.now() + timeoutMs;
  while (performance.now() < until) {
    const state = await read();
    if (state?.pid === pid && state.attempt > attemptBefore) return answer(state, io, file, loaded.sha256);
    if (signalProblem(pid, 0)) break;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  io.stderr.write(`fieldgate reload: process ${pid} gave no answer within ${timeoutMs} ms (see its log)\n`);
  return EXIT_UNAVAILABLE;
};
