// A source tree of the baseline commit for "before/after in the same run" benchmarks: `git archive`
// of the ref into a temporary directory, its node_modules pointing at this checkout's packages
// (same lockfile) except the workspace links, which point into the baseline tree itself.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readlinkSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface BaselineTree {
  ref: string;
  commit: string;
  root: string;
}

/** Links every package of `from` into `to`, except the workspace links (`fieldgate`, `@fieldgate/*`), recreated as relative links. */
function linkNodeModules(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) {
    if (name === 'fieldgate') {
      symlinkSync('..', join(to, name));
    } else if (name === '@fieldgate') {
      mkdirSync(join(to, name));
      for (const pkg of readdirSync(join(from, name))) symlinkSync(readlinkSync(join(from, name, pkg)), join(to, name, pkg));
    } else {
      symlinkSync(join(from, name), join(to, name));
    }
  }
}

export async function baselineTree(ref: string, repo: string): Promise<BaselineTree> {
  const commit = execFileSync('git', ['-C', repo, 'rev-parse', `${ref}^{commit}`], { encoding: 'utf8' }).trim();
  const root = join(tmpdir(), `fieldgate-baseline-${commit.slice(0, 12)}`);
  if (!existsSync(join(root, 'node_modules'))) {
    mkdirSync(root, { recursive: true });
    execFileSync('sh', ['-c', `git -C "$1" archive "$2" | tar -x -C "$3"`, 'sh', repo, commit, root]);
    linkNodeModules(join(repo, 'node_modules'), join(root, 'node_modules'));
  }
  return { ref, commit, root: `${root}/` };
}
