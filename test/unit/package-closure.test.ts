// scripts/package-closure.mjs picks the packages the .deb's node_modules keeps: the natives and
// everything they load, resolved as Node does (nested first), another platform's optional
// package skipped, a missing required one an error.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

function tree(packages: Record<string, { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> }>): string {
  root = mkdtempSync(join(tmpdir(), 'fieldgate-closure-'));
  for (const [path, manifest] of Object.entries(packages)) {
    mkdirSync(join(root, path), { recursive: true });
    writeFileSync(join(root, path, 'package.json'), JSON.stringify({ name: path.split('node_modules/').at(-1), ...manifest }));
  }
  return root;
}

const closure = (dir: string, ...names: string[]) => spawnSync(process.execPath, ['scripts/package-closure.mjs', dir, ...names], { encoding: 'utf8' });

describe('package-closure', () => {
  it('follows dependencies and installed optional ones, nested copies inside their parent', () => {
    const dir = tree({
      native: { dependencies: { loader: '1' }, optionalDependencies: { '@n/linux-x64': '1', '@n/linux-arm64': '1' } },
      '@n/linux-x64': {},
      loader: { dependencies: { debug: '4' } },
      'loader/node_modules/debug': { dependencies: { ms: '2' } },
      debug: {},
      ms: {},
      unrelated: {},
    });
    const r = closure(dir, 'native');
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual(['@n/linux-x64', 'loader', 'ms', 'native']);
  });

  it('fails naming a missing required dependency and who needs it', () => {
    const dir = tree({ native: { dependencies: { gone: '1' } } });
    const r = closure(dir, 'native');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('gone (needed by native) is not installed');
  });

  it('terminates on a dependency cycle', () => {
    const dir = tree({ a: { dependencies: { b: '1' } }, b: { dependencies: { a: '1' } } });
    expect(closure(dir, 'a').stdout.trim().split('\n')).toEqual(['a', 'b']);
  });

  it('answers usage with exit 64 without names', () => {
    expect(closure('node_modules').status).toBe(64);
  });
});
