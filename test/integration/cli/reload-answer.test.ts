// What `fieldgate reload` answers about the daemon's reload. It names the site file digest the
// daemon applied, and fails (exit 75) when it is not the one it checked: here the file is
// rewritten in place, truncated to a shorter but valid file, between the command's check and the
// daemon's read (6 of 10 devices removed: applied, with one warning naming them). A reload that
// fails while applying (a fault injected part-way) is rolled back and answered as failed (exit
// 70). The daemon is this process (startGateway, reloading with the worker-thread reader on
// SIGHUP as `fieldgate run` does) polling the Modbus simulator; the command finds it by --pid.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseSimMap, startSimulation, type Simulation } from '../../../packages/simulator/src/index.js';
import type { CompiledDevice } from '../../../src/core/config/compile.js';
import { Poller } from '../../../src/device/poller.js';
import { startGateway, type GatewayHandle } from '../../../src/main.js';
import { silentLogger } from '../../../src/ops/log.js';
import { loadConfigWithDigest } from '../../../src/ops/site-file.js';
import { readSiteFile } from '../../../src/ops/site-file-reader.js';
import { captureLog, type CapturedLog } from '../../helpers/capture-log.js';
import { runCli } from '../../helpers/run-cli.js';

const UNITS = 10;
let dir: string;
let sim: Simulation;
let gateway: GatewayHandle | undefined;
let onHangup: (() => void) | undefined;

function siteText(units: number, port: number): string {
  const devices = Array.from({ length: units }, (_, i) => `  - name: m${i + 1}\n    bus: plant\n    unitId: ${i + 1}\n    pollIntervalMs: 500\n    points: [{ id: p, table: holding, address: 0 }]\n`).join('');
  return `gateway:\n  stateDir: ${join(dir, 'state')}\n  logLevel: info\n  health: { enabled: false }\nbuses:\n  - { name: plant, kind: tcp, host: 127.0.0.1, port: ${port} }\ndevices:\n${devices}`;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fg-reload-digest-'));
  const map = parseSimMap(`units:\n${Array.from({ length: UNITS + 1 }, (_, i) => `  ${i + 1}:\n    size: { holding: 10 }\n`).join('')}`);
  if (!map.ok) throw new Error(map.problems.join('; '));
  sim = await startSimulation({ map: map.map, logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 } });
});

afterEach(async () => {
  vi.restoreAllMocks();
  if (onHangup) process.off('SIGHUP', onHangup);
  onHangup = undefined;
  await gateway?.stop();
  gateway = undefined;
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The daemon: this process, reloading on SIGHUP after `beforeRead` (the file's rewrite) has run. */
async function daemon(site: string, beforeRead: () => void): Promise<{ g: GatewayHandle; capture: CapturedLog; done: () => Promise<unknown> }> {
  const capture = captureLog();
  const loaded = loadConfigWithDigest(site, {});
  const g = await startGateway(loaded.config, { logger: capture.log, env: {}, configSha256: loaded.sha256 });
  gateway = g;
  let reloading: Promise<unknown> = Promise.resolve();
  onHangup = () => {
    beforeRead();
    reloading = g.reload(() => readSiteFile(site, {}));
  };
  process.on('SIGHUP', onHangup);
  return { g, capture, done: () => reloading };
}

describe('fieldgate reload: the digest applied', () => {
  it('a file rewritten in place (truncated, still valid) during the reload: exit 75 naming both digests; the removal warned with every name', async () => {
    const site = join(dir, 'site.yaml');
    const port = sim.tcp?.port ?? 0;
    writeFileSync(site, siteText(UNITS, port));
    const full = siteText(UNITS + 1, port);
    // What a writer that truncates then writes leaves when read half way: the first 4 devices.
    const cut = full.indexOf('  - name: m5\n');
    const truncated = full.slice(0, cut);
    const { g, capture, done } = await daemon(site, () => writeFileSync(site, truncated));
    writeFileSync(site, full);

    const result = await runCli(['reload', '--config', site, '--pid', String(process.pid)], { PATH: process.env.PATH });
    await done();
    expect(result.code).toBe(75);
    expect(result.out).toBe('');
    expect(result.err).toContain(`the daemon applied site file sha256 ${sha256(truncated)}, not the one checked here (sha256 ${sha256(full)})`);
    expect(result.err).toMatch(/the file changed during the reload; generation 2 runs what the daemon read/);
    expect(g.status().config).toMatchObject({ generation: 2, sha256: sha256(truncated) });
    expect(g.status().devices.map((d) => d.name)).toEqual(['m1', 'm2', 'm3', 'm4']);
    expect(capture.messages('site file reload removes more than half the devices')).toEqual([expect.objectContaining({
      level: 40, removed: ['m5', 'm6', 'm7', 'm8', 'm9', 'm10'], removedCount: 6, devicesBefore: 10, devicesAfter: 4, sha256: sha256(truncated),
    })]);
  }, 60_000);

  it('the file it checked: exit 0 with its full digest; removing half the devices or fewer is no warning', async () => {
    const site = join(dir, 'site.yaml');
    const port = sim.tcp?.port ?? 0;
    writeFileSync(site, siteText(UNITS, port));
    const { g, capture, done } = await daemon(site, () => undefined);
    const half = siteText(UNITS / 2, port);
    writeFileSync(site, half);

    const result = await runCli(['reload', '--config', site, '--pid', String(process.pid)], { PATH: process.env.PATH });
    await done();
    expect(result.err).toBe('');
    expect(result.out).toBe(`fieldgate reload: reloaded; generation 2, sha256 ${sha256(half)} (the file checked)\n`);
    expect(result.code).toBe(0);
    expect(g.status().devices).toHaveLength(UNITS / 2);
    expect(readFileSync(site, 'utf8')).toBe(half);
    expect(capture.messages('site file reload removes more than half the devices')).toHaveLength(0);
  }, 60_000);

  it('a reload that fails while applying: rolled back, exit 70 with the reason, the old file still running', async () => {
    const site = join(dir, 'site.yaml');
    const port = sim.tcp?.port ?? 0;
    const before = siteText(UNITS, port);
    writeFileSync(site, before);
    const { g, capture, done } = await daemon(site, () => undefined);
    // The new 11th device cannot join its bus's poller (after the other ten were left alone).
    const addDevice = Poller.prototype.addDevice;
    vi.spyOn(Poller.prototype, 'addDevice').mockImplementation(function (this: Poller, d: CompiledDevice) {
      if (d.config.name === 'm11') throw new Error('injected: poller refused m11');
      addDevice.call(this, d);
    });
    writeFileSync(site, siteText(UNITS + 1, port));

    const result = await runCli(['reload', '--config', site, '--pid', String(process.pid)], { PATH: process.env.PATH });
    await done();
    expect(result.code).toBe(70);
    expect(result.out).toBe('');
    expect(result.err).toContain('reload: reload failed while applying, rolled back: injected: poller refused m11');
    expect(result.err).toMatch(/1 problem\(s\); failed in the daemon, generation 1 keeps running \(see its log\)/);
    expect(g.status().config).toMatchObject({ generation: 1, sha256: sha256(before), reloads: { failed: 1 } });
    expect(g.status().devices).toHaveLength(UNITS);
    expect(capture.messages('site file reload failed: rolled back, the running config is unchanged')).toHaveLength(1);
  }, 60_000);
});
