// Builds of fieldgate to compare in one bench run: this working tree, and a baseline commit (by
// default where this branch left main, or on main the previous commit; BENCH_BASELINE_REF to
// choose) exported with git archive and compiled with this checkout's TypeScript and dependencies.
import { execFileSync, execSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8' }).trim();

export interface Checkout {
  label: string;
  /** How the daemon is started after node's flags: a checkout's bin/fieldgate.js over its fresh dist/. */
  entry: string[];
  cleanup(): void;
}

/** The baseline commit: BENCH_BASELINE_REF, else where HEAD left main, else (on main) HEAD's first parent. */
export function baselineRef(env = process.env): string {
  if (env.BENCH_BASELINE_REF) return git('rev-parse', '--verify', `${env.BENCH_BASELINE_REF}^{commit}`);
  const head = git('rev-parse', 'HEAD');
  const base = git('merge-base', 'HEAD', 'main');
  return base === head ? git('rev-parse', 'HEAD~1') : base;
}

function compile(root: string): void {
  execFileSync(resolve('node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], { cwd: root, stdio: 'inherit' });
}

/** This working tree (uncommitted changes included), compiled in place. */
export function currentCheckout(): Checkout {
  compile(process.cwd());
  const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
  return { label: `this checkout (${git('rev-parse', '--short', 'HEAD')}${dirty ? ' + uncommitted changes' : ''})`, entry: [resolve('bin/fieldgate.js')], cleanup: () => undefined };
}

/** A commit's tree exported to a temporary directory (git archive: no worktree registered), compiled there. */
export function commitCheckout(commit: string): Checkout {
  const root = mkdtempSync(join(tmpdir(), 'fg-bench-base-'));
  try {
    execSync(`git archive ${commit} | tar -x -C ${root}`);
    // Same dependencies as this checkout: the daemon's libraries are not what is compared.
    symlinkSync(resolve('node_modules'), join(root, 'node_modules'));
    compile(root);
  } catch (err) {
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  return { label: `baseline ${git('rev-parse', '--short', commit)}`, entry: [join(root, 'bin/fieldgate.js')], cleanup: () => rmSync(root, { recursive: true, force: true }) };
}
