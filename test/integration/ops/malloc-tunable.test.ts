// glibc's malloc setting the service runs with (GLIBC_TUNABLES in service.env): the same in the unit, the
// packaged `fieldgate` command and the image, and what it is for: logins on the page (scrypt, 16 MiB
// each, on libuv's threads) leave no memory behind.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEnvFile } from '../../../src/core/env-file.js';
import { TSX_FROM_SOURCE } from '../../helpers/child.js';

const unitValue = parseEnvFile(readFileSync('systemd/service.env', 'utf8')).GLIBC_TUNABLES;
const FIXTURE = 'test/integration/ops/fixtures/login-memory.ts';

/** RssAnon growth (MB) of a child that runs eight logins, under `env`. */
function loginGrowthMb(env: NodeJS.ProcessEnv): number {
  const out = execFileSync(process.execPath, [...TSX_FROM_SOURCE, FIXTURE], { env, encoding: 'utf8', timeout: 120_000 });
  const { before, after } = JSON.parse(out.trim()) as { before: number; after: number };
  return after - before;
}

/** What the packaged /usr/bin/fieldgate hands node as GLIBC_TUNABLES (its tree's node replaced by a printer). */
function wrapperValue(env: NodeJS.ProcessEnv): string {
  const tree = mkdtempSync(join(tmpdir(), 'fieldgate-tree-'));
  try {
    mkdirSync(join(tree, 'bin'));
    writeFileSync(join(tree, 'bin/node'), '#!/bin/sh\nprintf "%s" "${GLIBC_TUNABLES-unset}"\n');
    chmodSync(join(tree, 'bin/node'), 0o755);
    return execFileSync('sh', ['packaging/deb/fieldgate.sh', '--version'], { env: { ...env, FIELDGATE_TREE: tree }, encoding: 'utf8' });
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
}

describe('glibc malloc tunable (GLIBC_TUNABLES)', () => {
  it('is set for the unit (service.env), the packaged command (unless already set) and the image, to the same value', () => {
    expect(unitValue).toBe('glibc.malloc.mmap_threshold=131072');
    const { GLIBC_TUNABLES: _ignored, ...without } = process.env;
    expect(wrapperValue(without)).toBe(unitValue);
    expect(wrapperValue({ ...without, GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' })).toBe('glibc.malloc.arena_max=2');
    expect(readFileSync('Dockerfile.arm64', 'utf8')).toContain(`    GLIBC_TUNABLES=${unitValue}\n`);
  });

  it('keeps eight logins from leaving their scrypt memory resident; without it they leave tens of MB', () => {
    const { GLIBC_TUNABLES: _ignored, ...without } = process.env;
    const tuned = loginGrowthMb({ ...without, GLIBC_TUNABLES: unitValue });
    const untuned = loginGrowthMb(without);
    expect(tuned).toBeLessThan(8);
    expect(untuned).toBeGreaterThan(32);
  }, 240_000);
});
