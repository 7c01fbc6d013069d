// Finds the processes a test run started that are still alive: every child of the suite carries
// FIELDGATE_TEST_RUN=<run id> in its environment (set before the workers start, passed on to
// every child, see child-guard.ts), which /proc/<pid>/environ shows even after a re-parent to init.
import { readdirSync, readFileSync } from 'node:fs';

export const RUN_MARKER = 'FIELDGATE_TEST_RUN';

export interface MarkedProcess {
  pid: number;
  ppid: number;
  pgid: number;
  command: string;
}

function readStat(procDir: string, pid: number | 'self'): { state: string; ppid: number; pgid: number } | undefined {
  try {
    const stat = readFileSync(`${procDir}/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so split after the last ')'.
    const [state, ppid, pgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: state ?? '?', ppid: Number(ppid), pgid: Number(pgid) };
  } catch {
    return undefined;
  }
}

/** Live (not zombie) processes whose environment has RUN_MARKER=runId, this process left out. */
export function markedProcesses(runId: string, procDir = '/proc'): MarkedProcess[] {
  const needle = Buffer.from(`\0${RUN_MARKER}=${runId}\0`);
  const found: MarkedProcess[] = [];
  for (const name of readdirSync(procDir)) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let environ: Buffer;
    try {
      environ = Buffer.concat([Buffer.from([0]), readFileSync(`${procDir}/${pid}/environ`), Buffer.from([0])]);
    } catch {
      continue; // gone, or another user's
    }
    if (!environ.includes(needle)) continue;
    const stat = readStat(procDir, pid);
    if (stat === undefined || stat.state === 'Z' || stat.state === 'X') continue;
    let command = '';
    try {
      command = readFileSync(`${procDir}/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    } catch { /* gone meanwhile */ }
    found.push({ pid, ppid: stat.ppid, pgid: stat.pgid, command });
  }
  return found;
}

export interface ReapOptions {
  /** How long processes may take to end on their own (a worker still stopping ends its children). */
  graceMs?: number;
  /** Not counted as left over: this run's own vitest workers (children of the main process). */
  ignore?: (p: MarkedProcess) => boolean;
  procDir?: string;
}

/**
 * The run's processes still alive after the grace time, each killed (its process group too) with
 * SIGKILL. An empty list: the run left nothing behind.
 */
export async function reapLeftovers(runId: string, { graceMs = 5000, ignore = (p) => p.ppid === process.pid, procDir }: ReapOptions = {}): Promise<MarkedProcess[]> {
  const deadline = Date.now() + graceMs;
  let left = markedProcesses(runId, procDir).filter((p) => !ignore(p));
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = markedProcesses(runId, procDir).filter((p) => !ignore(p));
  }
  // Never this process's own group: a child that stayed in it shares it with vitest and npm.
  const ownGroup = readStat('/proc', 'self')?.pgid;
  for (const p of left) {
    for (const target of p.pgid === ownGroup || p.pgid <= 1 ? [p.pid] : [-p.pgid, p.pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch { /* already gone, or the group was this one */ }
    }
  }
  return left;
}

export function describeLeftovers(left: readonly MarkedProcess[]): string {
  return [`the test run left ${left.length} process(es) running; killed them:`, ...left.map((p) => `  pid ${p.pid} (group ${p.pgid}, parent ${p.ppid}): ${p.command.slice(0, 200)}`)].join('\n');
}
