// Children of a test in their own process groups, ended as groups: a killed leader cannot leave a
// grandchild behind (a shell's socat, tsx's node), and nothing a test starts outlives it.
import type { ChildProcess } from 'node:child_process';

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * Sends `signal` to the child's whole group (it leads one when spawned detached), else to the child
 * alone while it runs (an exited child's pid may belong to another process by now).
 */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  const pid = child.pid;
  if (pid === undefined || pid <= 1) return;
  try {
    process.kill(-pid, signal);
    return;
  } catch { /* no such group: not detached, or every member gone */ }
  if (hasExited(child)) return;
  try {
    process.kill(pid, signal);
  } catch { /* gone already */ }
}

/**
 * Ends the child's group: SIGTERM, then SIGKILL after `graceMs` if the leader is still there. The
 * group gets SIGKILL even when the leader went at once, for members that ignore SIGTERM.
 */
export async function endGroup(child: ChildProcess, graceMs = 3000): Promise<void> {
  if (child.pid === undefined) return;
  if (!hasExited(child)) {
    signalGroup(child, 'SIGTERM');
    await waitExit(child, graceMs);
  }
  signalGroup(child, 'SIGKILL');
  if (!hasExited(child)) await waitExit(child, 5000);
}

async function waitExit(child: ChildProcess, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    new Promise<void>((resolve) => child.once('exit', () => resolve())),
    new Promise<void>((resolve) => { timer = setTimeout(resolve, ms); }),
  ]);
  clearTimeout(timer);
}
