// `fieldgate reload` when there is nothing (or the wrong thing) to reload: bad arguments, a broken
// file, no daemon, a stale state file naming a process that is not a daemon, a daemon that dies.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findFlockHolder, stateLockHolder } from '../../../src/cli/lock-holder.js';
import { CONFIG_STATE_FILE } from '../../../src/ops/config-state.js';
import { waitFor } from '../../helpers/wait.js';
import { runCli } from '../../helpers/run-cli.js';

let dir: string;
let site: string;
let sleeper: ChildProcess | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fg-reload-cli-'));
  site = join(dir, 'site.yaml');
  writeFileSync(site, `
gateway: { stateDir: ${join(dir, 'state')}, health: { enabled: false } }
buses: [{ name: plant, kind: tcp, host: 127.0.0.1, port: 5020 }]
devices: [{ name: m1, bus: plant, unitId: 1, points: [{ id: p, table: holding, address: 0 }] }]
`);
});

afterEach(() => {
  sleeper?.kill('SIGKILL');
  sleeper = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function stateFile(pid: number): void {
  mkdirSync(join(dir, 'state'), { recursive: true });
  writeFileSync(join(dir, 'state', CONFIG_STATE_FILE), JSON.stringify({ pid, attempt: 0, outcome: 'started', generation: 1, sha256: 'x', loadedAt: '', lastError: null, reloads: { applied: 0, unchanged: 0, refused: 0 }, problems: [] }));
}

const env = { PATH: process.env.PATH };

// A process that takes the lock itself (flock through koffi, as `run` does) on this test's Node,
// with `run` in its command line, and leaves a mark when it gets SIGHUP: argv lock, mark.
const NODE_HOLDER = `
import { openSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const koffi = createRequire(process.cwd() + '/package.json')('koffi');
const flock = koffi.load(null).func('int flock(int, int)');
const [lock, mark] = process.argv.slice(1);
if (flock(openSync(lock, 'r'), 2) !== 0) process.exit(3);
process.on('SIGHUP', () => { writeFileSync(mark, 'hup'); process.exit(0); });
setTimeout(() => process.exit(0), 30000);
`;
// The same, in another program (Python): it holds the lock and says `run`, but is not fieldgate.
const PYTHON_HOLDER = 'import fcntl, os, signal, sys, time\nfd = os.open(sys.argv[1], os.O_RDONLY)\nfcntl.flock(fd, fcntl.LOCK_EX)\n'
  + 'signal.signal(signal.SIGHUP, lambda *a: (open(sys.argv[2], "w").write("hup"), sys.exit(0)))\ntime.sleep(30)\n';

describe('fieldgate reload', () => {
  it.each([
    [[], /no site file given/],
    [['--config', 'x.yaml', '--pid', '0'], /bad --pid/],
    [['--config', 'x.yaml', '--pid', '12abc'], /bad --pid/],
    [['--config', 'x.yaml', '--timeout-ms=-5'], /bad --pid or --timeout-ms/],
    [['--config', 'x.yaml', '--timeout-ms', 'soon'], /bad --pid or --timeout-ms/],
    [['--config', 'x.yaml', '--bogus'], /Unknown option/],
  ])('%j: usage error, exit 64', async (args, message) => {
    const result = await runCli(['reload', ...args], env);
    expect(result.code).toBe(64);
    expect(result.err).toMatch(message);
  });

  it('a broken file: every problem, exit 78, nothing signalled', async () => {
    writeFileSync(site, 'gateway: { stateDir: 5 }\nbuses: []\ndevices: [ { name: 1 } ]\n');
    const result = await runCli(['reload', '--config', site], env);
    expect(result.code).toBe(78);
    expect(result.err).toMatch(/problem\(s\); nothing sent to the daemon/);
  });

  it('no daemon: no state file, or a process that is gone: exit 69 with the reason', async () => {
    const none = await runCli(['reload', '--config', site], env);
    expect(none.code).toBe(69);
    expect(none.err).toMatch(/no running daemon found .*config-state\.json is missing/);
    // A PID that surely is not running: above the kernel's maximum.
    const gone = await runCli(['reload', '--config', site, '--pid', '4194305'], env);
    expect(gone.code).toBe(69);
    expect(gone.err).toMatch(/no process 4194305: is fieldgate running\?/);
  });

  it('a stale state file naming another program: that program is never signalled', async () => {
    sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    const pid = sleeper.pid ?? 0;
    stateFile(pid);
    const result = await runCli(['reload', '--config', site], env);
    expect(result.code).toBe(69);
    expect(result.err).toMatch(new RegExp(`process ${pid} .*does not hold the state lock .*, so it is not a fieldgate daemon; give --pid`));
    expect(sleeper.exitCode).toBeNull();
    expect(sleeper.signalCode).toBeNull();
  });

  it('a state file naming a process whose command line says `run`: not signalled unless it holds the state lock', async () => {
    // Anyone who can write the state directory can name any PID; the kernel's lock table decides.
    sleeper = spawn('sh', ['-c', 'sleep 30', 'run'], { stdio: 'ignore' });
    const pid = sleeper.pid ?? 0;
    stateFile(pid);
    writeFileSync(join(dir, 'state', 'fieldgate.lock'), `${pid}\n`);
    const result = await runCli(['reload', '--config', site], env);
    expect(result.code).toBe(69);
    expect(result.err).toMatch(/does not hold the state lock \(nothing holds .*fieldgate\.lock\)/);
    expect(sleeper.exitCode).toBeNull();
    expect(sleeper.signalCode).toBeNull();
  });

  it.each([
    ['the state directory (the lock that decides)', ''],
    ['fieldgate.lock (the lock of older versions)', 'fieldgate.lock'],
  ])('the holder of the lock on %s is the one signalled, whatever PID the state file names', async (_what, target) => {
    stateFile(4194305);
    // A process that takes the lock itself (as `run` does), with `run` in its command line, and
    // leaves a mark when it gets SIGHUP.
    const hup = join(dir, 'hup');
    const lock = join(dir, 'state', target);
    if (target !== '') writeFileSync(lock, '4194305\n');
    sleeper = spawn(process.execPath, ['--input-type=module', '-e', NODE_HOLDER, lock, hup, 'run'], { stdio: 'ignore' });
    const holder = sleeper.pid ?? 0;
    await waitFor(() => ('pid' in stateLockHolder(join(dir, 'state')) ? true : undefined), { what: 'the lock held', timeoutMs: 10_000 });
    expect(stateLockHolder(join(dir, 'state'))).toMatchObject({ pid: holder });
    const result = await runCli(['reload', '--config', site, '--timeout-ms', '2000'], env);
    await waitFor(() => (existsSync(hup) ? true : undefined), { what: 'the holder got SIGHUP', timeoutMs: 10_000 });
    expect(result.err).not.toMatch(/4194305/);
    // It answers nothing (not a real daemon): the CLI says so once it is gone.
    expect(result.code).toBe(69);
  });

  it('a process of another program holding the lock, `run` in its command line: never signalled', async () => {
    stateFile(4194305);
    const hup = join(dir, 'hup');
    const lock = join(dir, 'state');
    sleeper = spawn('/usr/bin/python3', ['-c', PYTHON_HOLDER, lock, hup, 'run'], { stdio: 'ignore' });
    const holder = sleeper.pid ?? 0;
    await waitFor(() => ('pid' in stateLockHolder(lock) ? true : undefined), { what: 'the lock held', timeoutMs: 10_000 });
    const result = await runCli(['reload', '--config', site, '--timeout-ms', '500'], env);
    expect(result.code).toBe(69);
    expect(result.err).toMatch(new RegExp(`process ${holder} holds .* but runs .*python.*, not this fieldgate's runtime`));
    expect(existsSync(hup)).toBe(false);
    expect(sleeper.exitCode).toBeNull();
    expect(sleeper.signalCode).toBeNull();
  });
});

describe('findFlockHolder', () => {
  const LOCKS = '1: POSIX  ADVISORY  READ 17190 fe:00:2149009 128 128\n2: FLOCK  ADVISORY  WRITE 4242 fe:00:99 0 EOF\n2: -> FLOCK  ADVISORY  WRITE 5151 fe:00:99 0 EOF\n3: FLOCK  ADVISORY  WRITE 6262 08:01:99 0 EOF\n';
  it('finds the holder by device and inode, never a waiter', () => {
    expect(findFlockHolder(LOCKS, 'fe:00', 99n)).toBe(4242);
    expect(findFlockHolder(LOCKS, '08:01', 99n)).toBe(6262);
    expect(findFlockHolder(LOCKS, 'fe:00', 2149009n)).toBeUndefined();
    expect(findFlockHolder('', 'fe:00', 99n)).toBeUndefined();
  });

  it('a daemon that never answers (here: one that ignores SIGHUP and writes nothing): exit 69 after the timeout', async () => {
    sleeper = spawn('sh', ['-c', 'trap "" HUP; sleep 30'], { stdio: 'ignore' });
    const pid = sleeper.pid ?? 0;
    stateFile(pid);
    const result = await runCli(['reload', '--config', site, '--pid', String(pid), '--timeout-ms', '300'], env);
    expect(result.code).toBe(69);
    expect(result.err).toMatch(new RegExp(`process ${pid} gave no answer within 300 ms`));
    expect(sleeper.exitCode).toBeNull();
  });
});
