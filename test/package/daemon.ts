// The daemon as its own process for test:package: started as systemd would (the unit's command
// line, user, umask, environment and a NOTIFY_SOCKET), timed from spawn to READY=1.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GatewayStatus } from '../../src/ops/status.js';
import { startNotifyListener } from '../arm64/notify.js';
import { waitFor } from '../helpers/wait.js';

export interface DaemonSpec {
  /** The command line: node, its flags, the app's bin/fieldgate.js and its arguments. */
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  /** Run as this user (runuser), with umask 0077 as the unit's UMask=. */
  user?: string;
  /** Where the notify socket goes (a directory the user can reach). */
  dir: string;
  healthPort: number;
}

export interface RunningDaemon {
  pid: number;
  /** ms from spawn to READY=1 on the notify socket. */
  readyMs: number;
  log(): string;
  status(): Promise<GatewayStatus>;
  /** SIGTERM, then the exit code (SIGKILL after 30 s). */
  stop(): Promise<number | null>;
}

export async function startDaemon(spec: DaemonSpec): Promise<RunningDaemon> {
  const notify = await startNotifyListener(join(spec.dir, `notify-${Date.now()}.sock`));
  chmodSync(notify.path, 0o777);
  const env = { ...spec.env, NOTIFY_SOCKET: notify.path, WATCHDOG_USEC: '60000000' };
  const [command, ...args] = spec.user === undefined
    ? spec.argv
    : ['/usr/sbin/runuser', '-u', spec.user, '--', 'sh', '-c', 'umask 0077; exec "$@"', 'sh', ...spec.argv];
  const started = Date.now();
  const child: ChildProcess = spawn(command, args, { cwd: spec.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout?.on('data', (chunk: Buffer) => { log += chunk.toString(); });
  child.stderr?.on('data', (chunk: Buffer) => { log += chunk.toString(); });
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', (err) => { log += `spawn ${command}: ${err.message}\n`; resolve(null); });
  });
  // The signal goes to the daemon itself (runuser would SIGKILL it 2 s after forwarding a SIGTERM).
  let daemonPid: number | undefined;
  const signal = (name: NodeJS.Signals) => {
    try {
      if (daemonPid === undefined) child.kill(name);
      else process.kill(daemonPid, name);
    } catch {
      // already gone
    }
  };
  const stop = async () => {
    signal('SIGTERM');
    const killer = setTimeout(() => signal('SIGKILL'), 30_000);
    const code = await exited;
    clearTimeout(killer);
    notify.stop();
    return code;
  };
  try {
    const ready = await waitFor(() => {
      if (child.exitCode !== null || log.startsWith('spawn ')) throw new Error(`daemon exited with ${child.exitCode}: ${log.slice(-2000)}`);
      return notify.messages().find((m) => m.message.split('\n').includes('READY=1'));
    }, { timeoutMs: 180_000, intervalMs: 10, what: 'READY=1' });
    const readyMs = Date.now() - started;
    // runuser execs sh, which execs node: the READY sender is the daemon itself.
    const pid = ready.pid ?? child.pid ?? 0;
    daemonPid = pid;
    return {
      pid, readyMs, log: () => log, stop,
      status: async () => (await (await fetch(`http://127.0.0.1:${spec.healthPort}/status`)).json()) as GatewayStatus,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** VmRSS of a process and its anonymous and file-backed parts, as text in MB. */
export function rssText(pid: number): string {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (field: string) => (Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1]) / 1024).toFixed(1);
  return `${mb('VmRSS')} MB (anonymous ${mb('RssAnon')}, file ${mb('RssFile')})`;
}

/** The unit's command line and environment (ExecStart, WorkingDirectory, Environment=, EnvironmentFile=, RuntimeDirectory=). */
export function unitCommand(unitText: string): { argv: string[]; cwd: string; env: Record<string, string>; envFiles: Array<{ path: string; optional: boolean }>; user?: string; runtimeDirs: string[] } {
  const value = (key: string) => [...unitText.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1].trim());
  const exec = value('ExecStart');
  if (exec.length !== 1) throw new Error(`the unit has ${exec.length} ExecStart= lines`);
  const env: Record<string, string> = {};
  for (const line of value('Environment')) {
    const [key, ...rest] = line.split('=');
    env[key] = rest.join('=');
  }
  return {
    argv: exec[0].split(/\s+/), cwd: value('WorkingDirectory')[0] ?? '/', env,
    envFiles: value('EnvironmentFile').map((f) => ({ path: f.replace(/^-/, ''), optional: f.startsWith('-') })),
    user: value('User')[0], runtimeDirs: value('RuntimeDirectory').flatMap((d) => d.split(/\s+/)).map((d) => `/run/${d}`),
  };
}
