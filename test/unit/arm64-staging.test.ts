// test/arm64/run.sh must stage arm64 exactly as Dockerfile.arm64 builds it: same Node, same npm flags.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const dockerfile = readFileSync('Dockerfile.arm64', 'utf8');
const script = readFileSync('test/arm64/run.sh', 'utf8');
const npmCiFlags = (text: string) => /npm ci (?:--omit=dev )?(--cpu=arm64 --os=linux --libc=glibc --ignore-scripts)/.exec(text)?.[1];

describe('arm64 staging and Dockerfile.arm64', () => {
  it('pin the same exact Node version in both stages and in the script', () => {
    const pinned = /^NODE_ARM64_VERSION=(\d+\.\d+\.\d+)$/m.exec(script)?.[1];
    const images = [...dockerfile.matchAll(/^FROM .*node:([^ ]+)-bookworm-slim/gm)].map((m) => m[1]);
    expect(pinned).toMatch(/^20\./);
    expect(images).toEqual([pinned, pinned]);
    expect(script).toMatch(/^NODE_ARM64_INTEGRITY='sha512-[A-Za-z0-9+/]{86}=='$/m);
  });

  it('install the arm64 packages with the same npm flags, and compile nothing', () => {
    expect(npmCiFlags(script)).toBe('--cpu=arm64 --os=linux --libc=glibc --ignore-scripts');
    expect(npmCiFlags(dockerfile)).toBe(npmCiFlags(script));
    expect(dockerfile).not.toMatch(/g\+\+|make|node-gyp|apt-get install/);
  });
});
