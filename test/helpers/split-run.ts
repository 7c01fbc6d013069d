// Runs several vitest runs at once and adds their closing lines into one (test/run-suite.ts).
// Each child's lines are passed on whole, its own closing line held back; a run that ends without
// one, or fails without counting a failure (a teardown that found a leftover process), counts as
// one failure, so the total never reads better than a run did.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { addSummaries, formatSummary, parseSummary, type RunSummary } from './suite-summary.js';

export interface RunGroup {
  name: string;
  command: readonly [string, ...string[]];
}

export interface SplitOutput {
  out: (line: string) => void;
  err: (line: string) => void;
}

interface GroupResult {
  summary: RunSummary | undefined;
  exit: number;
}

function runGroup(group: RunGroup, env: NodeJS.ProcessEnv, io: SplitOutput, children: ChildProcess[]): Promise<GroupResult> {
  const [file, ...args] = group.command;
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...env, FIELDGATE_TEST_GROUP: group.name } });
  children.push(child);
  let summary: RunSummary | undefined;
  const pass = (stream: NodeJS.ReadableStream, write: (line: string) => void): Promise<void> =>
    new Promise((resolve) => {
      const lines = createInterface({ input: stream, crlfDelay: Infinity });
      lines.on('line', (line) => {
        const parsed = parseSummary(line);
        if (parsed) summary = parsed;
        else write(line);
      });
      lines.on('close', resolve);
    });
  const streams = Promise.all([pass(child.stdout!, io.out), pass(child.stderr!, io.err)]);
  return new Promise((resolve) => {
    child.on('error', (err) => {
      io.err(`the ${group.name} run did not start: ${err.message}`);
      void streams.then(() => resolve({ summary: undefined, exit: 127 }));
    });
    child.on('exit', (code, signal) => {
      void streams.then(() => resolve({ summary, exit: code ?? (signal ? 1 : 0) }));
    });
  });
}

const ONE_FAILURE: RunSummary = { passed: 0, failed: 1, skipped: 0 };

/** Every group at once; resolves with the total, once the per-group lines and the closing one are out. */
export async function runGroups(groups: readonly RunGroup[], env: NodeJS.ProcessEnv, io: SplitOutput, children: ChildProcess[] = []): Promise<RunSummary> {
  const results = await Promise.all(groups.map((group) => runGroup(group, env, io, children)));
  let total: RunSummary = { passed: 0, failed: 0, skipped: 0 };
  results.forEach(({ summary, exit }, i) => {
    const name = groups[i]!.name;
    if (summary === undefined) {
      io.out(`the ${name} run ended without its summary (exit ${exit}): counted as one failure`);
      total = addSummaries(total, ONE_FAILURE);
      return;
    }
    io.out(formatSummary(summary).replace('vitest:', `${name}:`));
    total = addSummaries(total, summary);
    if (exit !== 0 && summary.failed === 0) {
      io.out(`the ${name} run exited ${exit} after its summary: counted as one failure`);
      total = addSummaries(total, ONE_FAILURE);
    }
  });
  io.out(formatSummary(total));
  return total;
}
