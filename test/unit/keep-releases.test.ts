// scripts/keep-releases.sh, the pruning package.sh (pkg/) and apt-repo.sh (the pool) share, run
// by bash against planted empty .debs: dpkg's order, each architecture on its own, files that are
// not fieldgate packages left alone, and a setting that is no count refused. (test:package checks
// the same through a real build; this is the seconds-long check of the rules.)
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { requireProgram } from '../helpers/peers.js';
import { skipWithoutPeer } from '../helpers/skips.js';

const SCRIPT = resolve(import.meta.dirname, '../../scripts/keep-releases.sh');
const WITH_DPKG = skipWithoutPeer(() => requireProgram('dpkg'));
const dirs: string[] = [];
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

function planted(names: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'fieldgate-keep-'));
  dirs.push(dir);
  for (const name of names) writeFileSync(join(dir, name), '');
  return dir;
}

function keep(dir: string, count: string, env: NodeJS.ProcessEnv = process.env): { status: number | null; removed: string[]; left: string[]; stderr: string } {
  const run = spawnSync('bash', ['-c', `. "$0"; keep_newest_debs "$1" "$2"`, SCRIPT, dir, count], { encoding: 'utf8', env });
  const removed = run.stdout.split('\n').filter(Boolean).map((p) => p.slice(dir.length + 1)).sort();
  return { status: run.status, removed, left: readdirSync(dir).sort(), stderr: run.stderr };
}

const deb = (version: string, arch = 'amd64'): string => `fieldgate_${version}_${arch}.deb`;

describe('keep_newest_debs', () => {
  it('keeps the newest in dpkg order: +10 after +9, .dirty after its commit, ~rc before the release', WITH_DPKG, () => {
    const versions = ['0.1.0~rc1', '0.1.0', '0.1.0+1.gaaa', '0.1.0+9.gbbb', '0.1.0+10.gccc', '0.1.0+10.gccc.dirty', '0.1.0+11.gddd'];
    const dir = planted(versions.map((v) => deb(v)));
    const r = keep(dir, '3');
    expect(r.status).toBe(0);
    expect(r.left).toEqual(['0.1.0+10.gccc', '0.1.0+10.gccc.dirty', '0.1.0+11.gddd'].map((v) => deb(v)).sort());
    expect(r.removed).toEqual(['0.1.0~rc1', '0.1.0', '0.1.0+1.gaaa', '0.1.0+9.gbbb'].map((v) => deb(v)).sort());
  });

  it('counts each architecture on its own', WITH_DPKG, () => {
    const dir = planted([deb('0.1.0+1.ga'), deb('0.1.0+2.gb'), deb('0.1.0+3.gc'), deb('0.1.0+1.ga', 'arm64')]);
    const r = keep(dir, '2');
    expect(r.left).toEqual([deb('0.1.0+1.ga', 'arm64'), deb('0.1.0+2.gb'), deb('0.1.0+3.gc')].sort());
  });

  it('leaves files that are not fieldgate packages, and directories, as they are', WITH_DPKG, () => {
    const foreign = ['other_0.1.0_amd64.deb', `${deb('0.1.0+1.ga')}.partial`, 'fieldgate_0.1.0_amd64.tar.gz', 'README'];
    const dir = planted([...foreign, deb('0.1.0+2.gb'), deb('0.1.0+3.gc')]);
    mkdirSync(join(dir, deb('0.1.0+0.gdir')));
    const r = keep(dir, '1');
    expect(r.status).toBe(0);
    expect(r.left).toEqual([...foreign, deb('0.1.0+0.gdir'), deb('0.1.0+3.gc')].sort());
  });

  it('prunes hundreds of builds with about one dpkg comparison a version, not one per pair', WITH_DPKG, () => {
    const shuffled = Array.from({ length: 200 }, (_, i) => deb(`0.1.0+${i + 1}.g${(i * 7919).toString(16)}`)).sort();
    const dir = planted(shuffled);
    // A dpkg in front of the real one that counts its calls (counted, not timed).
    const bin = planted([]);
    const calls = join(bin, 'calls');
    writeFileSync(join(bin, 'dpkg'), `#!/bin/sh\necho >>"${calls}"\nexec ${requireProgram('dpkg')} "$@"\n`, { mode: 0o755 });
    const r = keep(dir, '5', { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` });
    expect(r.left).toEqual([196, 197, 198, 199, 200].map((n) => shuffled.find((f) => f.startsWith(`fieldgate_0.1.0+${n}.g`))).sort());
    const comparisons = readFileSync(calls, 'utf8').split('\n').length - 1;
    expect(comparisons).toBeGreaterThan(0);
    expect(comparisons).toBeLessThanOrEqual(2 * 200);
  });

  it('"all" keeps every one; a missing directory is nothing to prune', WITH_DPKG, () => {
    const dir = planted([deb('0.1.0+1.ga'), deb('0.1.0+2.gb')]);
    expect(keep(dir, 'all')).toMatchObject({ status: 0, removed: [], left: [deb('0.1.0+1.ga'), deb('0.1.0+2.gb')] });
    const run = spawnSync('bash', ['-c', `. "$0"; keep_newest_debs "$1" 1`, SCRIPT, join(dir, 'none')], { encoding: 'utf8' });
    expect(run.status).toBe(0);
  });

  it.each(['0', '-1', 'five', '', '5x', ' 5'])('refuses the count %j with 64 and removes nothing', (count) => {
    const dir = planted([deb('0.1.0+1.ga'), deb('0.1.0+2.gb')]);
    const r = keep(dir, count);
    expect(r.status).toBe(64);
    expect(r.stderr).toContain('is not a count of versions');
    expect(r.left).toHaveLength(2);
  });
});
