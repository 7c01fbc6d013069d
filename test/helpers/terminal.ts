// A command in a real terminal (test/helpers/pty_run.py: a new pty, the command its session
// leader), and the process table around it: what a user's terminal does to the demo.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { requireProgram } from './peers.js';
import { waitFor } from './wait.js';

const RUNNER = fileURLToPath(new URL('./pty_run.py', import.meta.url));
const PYTHON = '/usr/bin/python3';

export interface TerminalEnd {
  exit: number | null;
  signal: number | null;
}

export interface Terminal {
  /** The command's pid (the terminal's session leader and process group). */
  pid: number;
  /** Everything written to the terminal so far (escape sequences included). */
  screen(): string;
  /** Closes the terminal: the kernel hangs it up, as when its window is closed. */
  hangup(): void;
  /** Types Ctrl-C. */
  ctrlC(): void;
  /** Resolves when the command has exited. */
  ended: Promise<TerminalEnd>;
  /** Kills the command for sure (test clean-up). */
  kill(): Promise<void>;
}

export async function runInTerminal(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<Terminal> {
  requireProgram(PYTHON);
  const runner = spawn(PYTHON, [RUNNER, command, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let screen = '';
  let control = '';
  const events: Array<{ pid?: number } & Partial<TerminalEnd>> = [];
  runner.stdout.on('data', (chunk: Buffer) => { screen += chunk.toString('utf8'); });
  runner.stderr.on('data', (chunk: Buffer) => {
    control += chunk.toString('utf8');
    const lines = control.split('\n');
    control = lines.pop() ?? '';
    for (const line of lines) {
      try {
        events.push(JSON.parse(line) as (typeof events)[number]);
      } catch {
        screen += `\n[pty_run] ${line}\n`;
      }
    }
  });
  const runnerExit = new Promise<void>((resolve) => runner.once('exit', () => resolve()));
  const ended = runnerExit.then(() => {
    const end = events.find((e) => 'exit' in e);
    if (!end) throw new Error(`the terminal runner ended without the command's exit status:\n${screen}`);
    return { exit: end.exit ?? null, signal: end.signal ?? null };
  });
  ended.catch(() => undefined);
  const pid = await waitFor(() => events.find((e) => e.pid !== undefined)?.pid ?? (runner.exitCode !== null ? -1 : undefined), { what: 'the terminal to start', timeoutMs: 20_000 });
  if (pid < 0) throw new Error(`the terminal runner failed:\n${screen}`);
  return {
    pid,
    screen: () => screen,
    hangup: () => runner.stdin.write('hangup\n'),
    ctrlC: () => runner.stdin.write('ctrl-c\n'),
    ended,
    async kill() {
      if (runner.exitCode !== null) return;
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await runnerExit;
    },
  };
}

interface ProcessEntry {
  pid: number;
  ppid: number;
  comm: string;
  /** R, S, D, Z (zombie: exited, not yet reaped) ... */
  state: string;
  cmdline: string;
}

/** Every process the kernel lists now (/proc), with its parent and command line. */
export function processTable(): ProcessEntry[] {
  const entries: ProcessEntry[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses; the last ")" ends it.
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const [state, ppid] = stat.slice(close + 2).split(' ');
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      entries.push({ pid: Number(name), ppid: Number(ppid), comm, state, cmdline });
    } catch {
      // exited while being read
    }
  }
  return entries;
}

/** Running (a zombie has exited: only its exit status is left for its parent). */
export function isAlive(pid: number): boolean {
  const entry = processTable().find((p) => p.pid === pid);
  return entry !== undefined && entry.state !== 'Z';
}
