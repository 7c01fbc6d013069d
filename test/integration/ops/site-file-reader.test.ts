// A reload reads the site file a few devices per event-loop turn (a plain layout) or in a worker
// thread (anything else): the same config, the same problems and the same environment overrides as
// at start-up (loadConfig on the main thread), and the event loop stays free.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkHost } from '../../../src/ops/host-checks.js';
import { ConfigError, loadConfigWithDigest } from '../../../src/ops/site-file.js';
import { readSiteFile } from '../../../src/ops/site-file-reader.js';
import { readSiteInSlices } from '../../../src/ops/site-file-sliced.js';
import { TSX_FROM_SOURCE } from '../../helpers/child.js';

const run = promisify(execFile);
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fg-reader-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function site(text: string): string {
  const path = join(dir, 'site.yaml');
  writeFileSync(path, text);
  return path;
}

const GOOD = (stateDir: string) => `
gateway: { stateDir: ${stateDir}, health: { enabled: false }, cloud: { mqttUrl: "mqtt://127.0.0.1:1883", projectKey: pk-from-file } }
buses: [{ name: plant, kind: tcp, host: 127.0.0.1, port: 5020 }]
devices:
  - { name: m1, bus: plant, unitId: 1, pollIntervalMs: 2s, points: [{ id: p, table: holding, address: 0, type: float32, wordOrder: little }] }
`;

/** What start-up reports for the file (its issues), or what it threw otherwise. */
function startupIssues(path: string): unknown {
  try {
    loadConfigWithDigest(path, {}, checkHost);
    return [];
  } catch (err) {
    return err instanceof ConfigError ? err.issues : err;
  }
}

describe('readSiteFile (sliced on the event loop, or a worker thread)', () => {
  it('a plain layout is read a device at a time (slices of 0 ms: a turn after each): the loop runs in between, the result is start-up\'s', async () => {
    const devices = Array.from({ length: 60 }, (_, i) => `  - { name: n${i}, bus: plant, unitId: ${i + 2}, points: [{ id: p, table: holding, address: 0 }] }`).join('\n');
    const path = site(`${GOOD(join(dir, 'state'))}${devices}\n`);
    // One count per event-loop iteration (an immediate that queues the next), as the reader takes one per slice.
    let turns = 0;
    let counting = true;
    const count = () => { turns += 1; if (counting) setImmediate(count); };
    setImmediate(count);
    const read = await readSiteInSlices(path, {}, checkHost, 0);
    counting = false;
    // Parse, string copies and checks each give a turn after every device: more than two per device.
    expect(turns).toBeGreaterThan(120);
    const loaded = loadConfigWithDigest(path, {}, checkHost);
    expect(read?.issues).toEqual([]);
    expect(read?.sha256).toBe(loaded.sha256);
    expect(read?.config?.site).toEqual(loaded.config.site);
  });

  it.each([
    ['anchors and aliases', 'devices:\n  - &m { name: a, bus: plant, unitId: 1, points: [] }\n'],
    ['JSON', '{ "devices": [] }\n'],
    ['devices in flow style', 'devices: [{ name: x }]\n'],
  ])('%s: not cut, left to the worker (same answer as start-up)', async (_name, text) => {
    const path = site(text);
    expect(await readSiteInSlices(path, {}, checkHost)).toBeUndefined();
    const read = await readSiteFile(path, {});
    const expected = startupIssues(path);
    expect(read.issues).toEqual(expected);
  });

  it('gives what start-up gets: the same settings, devices, read plan, digest and environment overrides', async () => {
    const path = site(GOOD(join(dir, 'state')));
    const env = { FIELDGATE_PROJECT_KEY: 'pk-from-env', FIELDGATE_STATE_DIR: join(dir, 'env-state') };
    const [read, loaded] = [await readSiteFile(path, env), loadConfigWithDigest(path, env, checkHost)];
    expect(read.issues).toEqual([]);
    expect(read.sha256).toBe(loaded.sha256);
    expect(read.config?.gateway).toEqual(loaded.config.gateway);
    expect(read.config?.gateway.cloud.projectKey).toBe('pk-from-env');
    expect(read.config?.gateway.stateDir).toBe(join(dir, 'env-state'));
    expect(read.config?.site).toEqual(loaded.config.site);
    expect(read.config?.compiled.devices.map((d) => d.plan)).toEqual(loaded.config.compiled.devices.map((d) => d.plan));
    const block = { table: 'holding' as const, start: 0, words: Uint16Array.from([0x0000, 0x3f80]) };
    expect(read.config?.compiled.device('m1')?.codecs.get('p')?.decode(block)).toBe(1);
  });

  it.each([
    ['a missing file', undefined, /file not found/],
    ['broken YAML', 'buses: [unclosed\n', /YAML syntax error/],
    ['every problem of a bad file', 'gateway: { logLevel: loud }\nbuses: []\ndevices: [{ name: x }]\n', /logLevel/],
    ['a state directory that cannot be created (under a file)', 'UNDER_A_FILE', /gateway\.stateDir: cannot be used: a parent of it is a file/],
  ])('%s: the same problems as start-up, nothing thrown', async (_name, text, message) => {
    const path = text === undefined ? join(dir, 'nope.yaml') : site(text === 'UNDER_A_FILE' ? GOOD(join(dir, 'site.yaml', 'state')) : text);
    const read = await readSiteFile(path, {});
    const expected = startupIssues(path);
    expect(read.config).toBeUndefined();
    expect(read.issues).toEqual(expected);
    expect(read.issues.map((i) => `${i.path}: ${i.message}`).join('\n')).toMatch(message);
  });

  it('twenty reads in a daemon run from source leave no descriptor behind once their workers have ended', async () => {
    // A worker terminated right after its answer cut off its pending file writes (tsx's cache, as
    // the daemon runs from source with --import tsx) and, on Node 24, left two descriptors open in
    // the process per read. Counted in a child run like the daemon (vitest's own loader differs),
    // with its own empty temporary directory so tsx's cache is cold and the workers do write;
    // the child waits up to 30 s for the finished workers' descriptors to close.
    const path = site(GOOD(join(dir, 'state')));
    const script = `
      import { readdirSync } from 'node:fs';
      import { readSiteFile } from ${JSON.stringify(new URL('../../../src/ops/site-file-reader.ts', import.meta.url).href)};
      const count = () => readdirSync('/proc/self/fd').length;
      const read = async () => { if ((await readSiteFile(process.argv[1], {})).issues.length > 0) throw new Error('unexpected issues'); };
      // Start-up's own cache writes settle first: the count no longer falls for a second.
      await read();
      let before = count();
      for (let settled = Date.now() + 30000, last = -1; before !== last && Date.now() < settled; before = count()) {
        last = before;
        await new Promise((r) => setTimeout(r, 1000));
      }
      for (let i = 0; i < 20; i += 1) await read();
      const end = Date.now() + 30000;
      while (count() > before + 5 && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
      console.log(JSON.stringify({ before, after: count() }));`;
    const { stdout } = await run(process.execPath, [...TSX_FROM_SOURCE, '--input-type=module', '-e', script, path], {
      timeout: 120_000,
      env: { ...process.env, TMPDIR: mkdirSync(join(dir, 'tmp'), { recursive: true }) },
    });
    const { before, after } = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { before: number; after: number };
    expect(after - before).toBeLessThanOrEqual(5);
  }, 150_000);
});
