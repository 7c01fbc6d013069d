// The lockfile and CI keep the README's install compiler-free: every native dependency has its
// prebuilt package for linux x64, arm64 and 32-bit arm recorded, with an integrity, so `npm ci`
// on a Pi fetches the right one from the npm registry; nothing else runs install scripts.
// (The install itself, in a fresh clone and HOME, is `npm run test:install`: it downloads from
// the registry, so it is a script, not part of this loopback-only suite.)
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

interface LockEntry {
  version?: string;
  integrity?: string;
  optional?: boolean;
  os?: string[];
  cpu?: string[];
  hasInstallScript?: boolean;
  optionalDependencies?: Record<string, string>;
}

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, LockEntry> };
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  allowScripts: Record<string, boolean>;
};
const entry = (name: string): LockEntry | undefined => lock.packages[`node_modules/${name}`];

describe('native dependencies install from prebuilt packages', () => {
  it.each([
    ['libsql', '@libsql/linux-x64-gnu', 'x64'],
    ['libsql', '@libsql/linux-arm64-gnu', 'arm64'],
    ['libsql', '@libsql/linux-arm-gnueabihf', 'arm'],
    ['koffi', '@koromix/koffi-linux-x64', 'x64'],
    ['koffi', '@koromix/koffi-linux-arm64', 'arm64'],
    ['koffi', '@koromix/koffi-linux-arm', 'arm'],
  ])('%s has %s (linux %s) in the lockfile', (parent, platformPackage, cpu) => {
    const parentEntry = entry(parent);
    expect(parentEntry?.version).toBe(pkg.dependencies[parent]);
    expect(parentEntry?.optionalDependencies?.[platformPackage]).toBe(parentEntry?.version);
    const platform = entry(platformPackage);
    expect(platform).toMatchObject({ version: parentEntry?.version, optional: true, os: ['linux'], cpu: [cpu] });
    expect(platform?.integrity).toMatch(/^sha512-/);
  });

  it('runs install scripts only for allow-listed packages that check a prebuilt binary first', () => {
    const withScripts = Object.entries(lock.packages)
      .filter(([, e]) => e.hasInstallScript)
      .map(([path]) => path.replace(/^.*node_modules\//, ''))
      .sort();
    expect(withScripts).toEqual(Object.keys(pkg.allowScripts).sort());
  });

  it('has no dependency that compiles or downloads binaries from outside the npm registry', () => {
    const names = Object.keys(lock.packages).map((path) => path.replace(/^.*node_modules\//, ''));
    for (const banned of ['better-sqlite3', 'unix-dgram', 'prebuild-install', 'node-gyp', 'nan', 'node-pre-gyp', '@mapbox/node-pre-gyp']) {
      expect(names).not.toContain(banned);
    }
  });

  it('has .ci/run set no npm configuration, so CI installs as the README says', () => {
    const ci = readFileSync('.ci/run', 'utf8');
    expect(ci).not.toMatch(/npm_config_|NPM_CONFIG_|nodedir/);
    expect(ci).toMatch(/^npm ci\b/m);
    expect(ci).toMatch(/^npm test$/m);
  });

  it('keeps the arm64 image free of a compiler', () => {
    expect(readFileSync('Dockerfile.arm64', 'utf8')).not.toMatch(/\b(g\+\+|gcc|make|python3|build-essential)\b/);
  });
});

describe('the service install leaves the development packages out', () => {
  // npm installs workspaces even with --omit=dev; only --workspaces=false keeps them (and aedes) out.
  const serviceInstalls = (text: string) => [...text.matchAll(/npm ci --omit=dev[^\n`]*/g)].map((m) => m[0]);

  it.each(['README.md', 'docs/install.md', 'Dockerfile.arm64', 'scripts/test-install.sh'])('%s installs with --workspaces=false wherever it omits dev', (file) => {
    const installs = serviceInstalls(readFileSync(file, 'utf8'));
    expect(installs.length).toBeGreaterThan(0);
    for (const install of installs) expect(install, `${file}: ${install}`).toContain('--workspaces=false');
  });

  it('records aedes as the emulator package\'s dependency only, and both packages as workspace links', () => {
    expect(lock.packages[''] as unknown).not.toHaveProperty('dependencies.aedes');
    expect(lock.packages['packages/emulator'] as unknown).toHaveProperty('dependencies.aedes');
    expect(lock.packages['node_modules/@fieldgate/emulator'] as unknown).toEqual({ resolved: 'packages/emulator', link: true });
    expect(lock.packages['node_modules/@fieldgate/simulator'] as unknown).toEqual({ resolved: 'packages/simulator', link: true });
  });
});
