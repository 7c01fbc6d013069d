// test/arm64/run.sh must stage arm64 exactly as Dockerfile.arm64 builds it and the .deb packages
// ship it: same Node (scripts/node-runtime.sh), same npm flags.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const dockerfile = readFileSync('Dockerfile.arm64', 'utf8');
const script = readFileSync('test/arm64/run.sh', 'utf8');
const runtime = readFileSync('scripts/node-runtime.sh', 'utf8');
const packaging = readFileSync('scripts/package.sh', 'utf8');
const npmCiFlags = (text: string) => /npm ci (?:--omit=dev )?(--cpu=arm64 --os=linux --libc=glibc --ignore-scripts)/.exec(text)?.[1];

describe('arm64 staging and Dockerfile.arm64', () => {
  it('pin the same exact Node version, a maintained LTS line, in both stages, the script and the packages', () => {
    const pinned = /^FIELDGATE_NODE_VERSION=(\d+)\.\d+\.\d+$/m.exec(runtime);
    const images = [...dockerfile.matchAll(/^FROM .*node:([^ ]+)-bookworm-slim/gm)].map((m) => m[1]);
    expect(Number(pinned?.[1])).toBeGreaterThanOrEqual(24);
    expect(images).toEqual([pinned?.[0].split('=')[1], pinned?.[0].split('=')[1]]);
    for (const arch of ['X64', 'ARM64']) expect(runtime).toMatch(new RegExp(`^FIELDGATE_NODE_INTEGRITY_${arch}='sha512-[A-Za-z0-9+/]{86}=='$`, 'm'));
    for (const user of [script, packaging]) expect(user).toMatch(/^\. "\$REPO\/scripts\/node-runtime\.sh"$/m);
  });

  it('install the arm64 packages with the same npm flags, and compile nothing', () => {
    expect(npmCiFlags(script)).toBe('--cpu=arm64 --os=linux --libc=glibc --ignore-scripts');
    expect(npmCiFlags(dockerfile)).toBe(npmCiFlags(script));
    expect(packaging).toContain('npm ci --omit=dev --workspaces=false --cpu="$(node_arch "$arch")" --os=linux --libc=glibc --ignore-scripts');
    expect(dockerfile).not.toMatch(/g\+\+|make|node-gyp|apt-get install/);
  });
});
