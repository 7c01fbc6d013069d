// What the test:package scenarios share: the checks and their tally, commands as an admin runs
// them (apt-get with no terminal), the installed layout, a stand-in systemctl, and the installed
// unit's command line started as systemd would start it.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync, chownSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEnvFile } from '../../src/core/env-file.js';
import { startDaemon, unitCommand, type RunningDaemon } from './daemon.js';

/** The checkout (its scripts/). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const SITE = '/etc/fieldgate/site.yaml';
export const ENV_FILE = '/etc/fieldgate/fieldgate.env';
export const UNIT = '/usr/lib/systemd/system/fieldgate.service';
export const STATE = '/var/lib/fieldgate';
export const LIB = '/usr/lib/fieldgate';
export const WANTS = '/etc/systemd/system/multi-user.target.wants/fieldgate.service';

export const failures: string[] = [];
export function check(ok: boolean, what: string): boolean {
  process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${what}\n`);
  if (!ok) failures.push(what);
  return ok;
}
export const note = (what: string) => process.stdout.write(`     ${what}\n`);

export interface Ran { code: number | null; out: string; err: string }

/**
 * root's PATH on Debian, as an admin's shell and apt's dpkg have it. Never the caller's: under
 * `npm run` it starts with node_modules/.bin, whose `fieldgate` is the checkout's own command.
 */
export const ADMIN_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The caller's environment without what npm, Node or a fieldgate setting of the caller's shell adds. */
const adminEnv = () => Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(npm_|NODE_|FIELDGATE_)/i.test(name)));

/** A command with no terminal and standard input from /dev/null, as an unattended upgrade runs. */
export function run(command: string, argv: string[], options: { path?: string; timeoutMs?: number } = {}): Ran {
  const r = spawnSync(command, argv, {
    encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: options.timeoutMs ?? 300_000,
    env: { ...adminEnv(), PATH: options.path ?? ADMIN_PATH, DEBIAN_FRONTEND: 'noninteractive' },
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}`, err: r.stderr };
}

/** `DEBIAN_FRONTEND=noninteractive apt-get -y install ./x.deb </dev/null`. */
export function aptInstall(deb: string, options: { path?: string; extra?: string[] } = {}): Ran {
  // apt runs dpkg with its own PATH (DPkg::Path): the stand-in systemctl goes there too.
  const path = options.path === undefined ? [] : ['-o', `DPkg::Path=${options.path}`];
  return run('apt-get', ['-y', '-q', ...path, ...(options.extra ?? []), 'install', resolve(deb)], options);
}

export const debVersion = (deb: string) => execFileSync('dpkg-deb', ['-f', deb, 'Version'], { encoding: 'utf8' }).trim();
/** dpkg's status letters of the package ("ii ", "iF "...), or "" when it is not known. */
export const dpkgStatus = () => run('dpkg-query', ['-W', '-f=${db:Status-Abbrev}', 'fieldgate']).out.trim();
export const conffiles = () => run('dpkg-query', ['-W', '-f=${Conffiles}', 'fieldgate']).out;
/** The version /usr/lib/fieldgate/current points at. */
export function currentRelease(): string | undefined {
  try {
    return readlinkSync(join(LIB, 'current')).replace(/^releases\//, '');
  } catch {
    return undefined;
  }
}
export const releases = () => (existsSync(join(LIB, 'releases')) ? execFileSync('ls', [join(LIB, 'releases')], { encoding: 'utf8' }).split('\n').filter(Boolean) : []);

export function mode(path: string): string {
  const s = statSync(path);
  const name = (id: number, db: string) => execFileSync('getent', [db, String(id)], { encoding: 'utf8' }).split(':')[0];
  return `${(s.mode & 0o7777).toString(8).padStart(4, '0')} ${name(s.uid, 'passwd')}:${name(s.gid, 'group')}`;
}

/** What `systemctl enable fieldgate` leaves (it works without a running systemd too). */
export function enableUnit(): void {
  mkdirSync('/etc/systemd/system/multi-user.target.wants', { recursive: true });
  rmSync(WANTS, { force: true });
  execFileSync('ln', ['-s', UNIT, WANTS]);
}

/**
 * A stand-in systemctl first on PATH for the maintainer scripts: systemd "running", the service
 * active with the given main PID; it records what it is asked.
 */
export function fakeSystemctl(dir: string): { path: string; restarts(): number; setMainPid(pid: number): void } {
  const bin = join(dir, 'fake-systemd');
  const calls = join(dir, 'systemctl.calls');
  const pidFile = join(dir, 'systemctl.mainpid');
  mkdirSync(bin, { recursive: true });
  writeFileSync(pidFile, '0\n');
  writeFileSync(join(bin, 'systemctl'), `#!/bin/sh\necho "$*" >> ${calls}\ncase "$1" in is-system-running) echo running ;; show) cat ${pidFile} ;; esac\nexit 0\n`, { mode: 0o755 });
  return {
    path: `${bin}:${ADMIN_PATH}`,
    restarts: () => (existsSync(calls) ? readFileSync(calls, 'utf8') : '').split('\n').filter((l) => l.startsWith('restart')).length,
    setMainPid: (pid) => writeFileSync(pidFile, `${pid}\n`),
  };
}

/** Every line every started daemon wrote, for the only-JSON check. */
export const daemonOutput: string[] = [];

/**
 * The installed unit's command line as systemd runs it: its user, its environment files read with
 * the one parser (src/core/env-file.ts), its RuntimeDirectory= made afresh for each start.
 */
export async function startInstalled(work: string, healthPort: number, node?: string): Promise<RunningDaemon> {
  const unit = unitCommand(readFileSync(UNIT, 'utf8'));
  const env: Record<string, string> = { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', ...unit.env };
  for (const file of unit.envFiles) {
    if (!existsSync(file.path) && file.optional) continue;
    Object.assign(env, parseEnvFile(readFileSync(file.path, 'utf8')));
  }
  const ids = unit.user === undefined ? undefined : execFileSync('getent', ['passwd', unit.user], { encoding: 'utf8' }).split(':');
  for (const dir of unit.runtimeDirs) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o755);
    if (ids) chownSync(dir, Number(ids[2]), Number(ids[3]));
  }
  if (unit.runtimeDirs.length > 0) env.RUNTIME_DIRECTORY = unit.runtimeDirs.join(':');
  const argv = node === undefined ? unit.argv : [node, ...unit.argv.slice(1)];
  const daemon = await startDaemon({ argv, env, cwd: unit.cwd, user: unit.user, dir: work, healthPort });
  const stop = daemon.stop;
  return {
    ...daemon,
    stop: async () => {
      const code = await stop();
      daemonOutput.push(daemon.log());
      return code;
    },
  };
}

/** The lines of the daemons' output that are not JSON objects. */
export function nonJsonLines(): string[] {
  return daemonOutput.flatMap((log) => log.split('\n')).filter((line) => {
    if (line.trim() === '') return false;
    try {
      const value = JSON.parse(line) as unknown;
      return typeof value !== 'object' || value === null;
    } catch {
      return true;
    }
  });
}
