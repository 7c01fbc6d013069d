// Nothing a test starts outlives it: children in their own process groups with the run's marker
// (child-guard.ts, loaded for every file by vitest.config.ts), ended as groups after the test,
// an emulator fixture that exits when its parent goes, and the end-of-run check (leftovers.ts).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { TSX_FROM_SOURCE } from '../helpers/child.js';
import { markedProcesses, reapLeftovers, RUN_MARKER } from '../helpers/leftovers.js';
import { endGroup } from '../helpers/process-groups.js';
import { waitFor } from '../helpers/wait.js';

/** Alive and not a zombie (an orphan's zombie waits for init here). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
  } catch {
    return false;
  }
}

function field(pid: number, index: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[index]);
}
const groupOf = (pid: number) => field(pid, 2);

/** A shell leading a group with a sleeping grandchild; resolves once the grandchild's pid is printed. */
async function shellWithGrandchild(script: string): Promise<{ shell: ChildProcess; grandchild: number }> {
  const shell = spawn('sh', ['-c', `${script} & echo $!; wait`], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  shell.stdout?.on('data', (c: Buffer) => { out += c.toString(); });
  const grandchild = Number(await waitFor(() => /^(\d+)\n/.exec(out)?.[1], { what: 'the grandchild pid' }));
  return { shell, grandchild };
}

// Whatever these tests leave on old code (no guard), killed here so a failing run leaves nothing.
const started: number[] = [];
afterAll(() => {
  for (const pid of started) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone, as it should be */ }
  }
});

describe('children of a test', () => {
  it('run in their own process group with the run\'s marker, even with an env of their own', async () => {
    const child = spawn('sleep', ['30'], { stdio: 'ignore', env: { PATH: process.env.PATH } });
    started.push(child.pid!);
    await waitFor(() => readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').startsWith('sleep'), { what: 'sleep exec' });
    expect(groupOf(child.pid!)).toBe(child.pid);
    expect(process.env[RUN_MARKER]).toMatch(/^\d+-\d+$/);
    expect(readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0')).toContain(`${RUN_MARKER}=${process.env[RUN_MARKER]}`);
    await endGroup(child);
  });

  const leftRunning: number[] = [];
  it('may be left running by the test (its cleanup forgotten or never reached) ...', async () => {
    const { shell, grandchild } = await shellWithGrandchild('sleep 300');
    leftRunning.push(shell.pid!, grandchild);
    started.push(...leftRunning);
    expect(groupOf(grandchild)).toBe(shell.pid);
  });

  it('... and are gone, the whole group, when the next test starts', async () => {
    expect(leftRunning).toHaveLength(2);
    await waitFor(() => leftRunning.every((pid) => !alive(pid)), { what: 'the left children to end', timeoutMs: 10_000 });
  });

  it('are ended as a group: a member that ignores SIGTERM gets SIGKILL', async () => {
    const { shell, grandchild } = await shellWithGrandchild('trap "" TERM; sleep 300');
    started.push(shell.pid!, grandchild);
    await endGroup(shell, 200);
    await waitFor(() => !alive(grandchild), { what: 'the stubborn grandchild to end', timeoutMs: 10_000 });
  });

  it('still resolve promisify(execFile) with stdout and stderr', async () => {
    await expect(promisify(execFile)('sh', ['-c', 'echo out; echo err >&2'])).resolves.toEqual({ stdout: 'out\n', stderr: 'err\n' });
  });
});

describe('the end-of-run check', () => {
  it('finds and kills a process of the run that left every group (setsid), and ignores other runs', async () => {
    const run = `check-${process.pid}-${Date.now()}`;
    const r = await promisify(execFile)('sh', ['-c', `env ${RUN_MARKER}=${run} setsid -f sleep 300 >/dev/null 2>&1 </dev/null; env ${RUN_MARKER}=${run}-other setsid -f sleep 301 >/dev/null 2>&1 </dev/null`]);
    expect(r.stderr).toBe('');
    const mine = await waitFor(() => markedProcesses(run).find((p) => p.command === 'sleep 300'), { what: 'the escaped sleep' });
    const other = await waitFor(() => markedProcesses(`${run}-other`)[0], { what: 'the other run\'s sleep' });
    started.push(mine.pid, other.pid);
    const left = await reapLeftovers(run, { graceMs: 0 });
    expect(left.map((p) => p.pid)).toEqual([mine.pid]);
    await waitFor(() => !alive(mine.pid), { what: 'the leftover to be killed' });
    expect(alive(other.pid)).toBe(true);
    expect(await reapLeftovers(run, { graceMs: 0 })).toEqual([]);
  });
});

describe('the emulator fixture', () => {
  it('exits when the pipe from its parent ends (the worker killed before its afterAll)', async () => {
    const fixture = new URL('./emulator/fixtures/run-emulator-cli.ts', import.meta.url).pathname;
    const child = spawn(process.execPath, [...TSX_FROM_SOURCE, fixture, '--http-port', '0', '--mqtt-port', '0', '--tcp-port', '0', '--app-mqtt-port', '0', '--app-ws-port', '0', '--app-wss-port', '0'], { stdio: ['pipe', 'pipe', 'pipe'] });
    started.push(child.pid!);
    let out = '';
    child.stdout?.on('data', (c: Buffer) => { out += c.toString(); });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await waitFor(() => /http:\/\/127\.0\.0\.1:\d+/.test(out), { what: 'the emulator to print its ports', timeoutMs: 30_000 });
    child.stdin?.end(); // what the kernel does to the pipe when the worker dies
    await expect(exited).resolves.toBe(70);
  });
});
