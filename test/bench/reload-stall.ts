// How long a reload holds the daemon's event loop: in one process holding the running config of
// a site of N devices x 50 points (the gateway bench's layout), the site file is read again as a
// reload reads it (sliced on the event loop) and the reload planned, while a timer every 2 ms
// records each gap longer than 20 ms with the process's CPU time in it (a gap with little CPU is
// the box's other processes, not the reader). BENCH_RELOAD_STALL_DEVICES: sizes (default 1000,2000).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { planReload } from '../../src/core/config/site-diff.js';
import { keepRunningAddresses } from '../../src/core/config/sub-device-addresses.js';
import { loadConfigWithDigest } from '../../src/ops/site-file.js';
import { readSiteFile } from '../../src/ops/site-file-reader.js';

const UNITS_PER_BUS = 200;
const GAP_MS = 20;

function siteText(dir: string, devices: number, firstPeriod: string): string {
  const points = Array.from({ length: 50 }, (_, p) => `{ id: p${p}, table: holding, address: ${p}, report: { mode: always } }`).join(', ');
  const bus = (i: number) => Math.floor(i / UNITS_PER_BUS);
  return [
    'gateway:', `  stateDir: ${join(dir, 'state')}`, '  logLevel: warn', '  health: { enabled: false }',
    '  cloud:', '    mode: gateway', '    identity: { accessToken: gw-token }', '    mqttUrl: mqtt://127.0.0.1:1883', '    projectKey: k', '    syncPeriodMs: 0',
    'buses:', ...Array.from({ length: Math.ceil(devices / UNITS_PER_BUS) }, (_, b) => `  - { name: plant-${b}, kind: tcp, host: 127.0.0.1, port: ${5020 + b} }`),
    'devices:', ...Array.from({ length: devices }, (_, i) => `  - { name: dev-${i + 1}, bus: plant-${bus(i)}, unitId: ${(i % UNITS_PER_BUS) + 1}, pollIntervalMs: ${i === 0 ? firstPeriod : '1s'}, `
      + `cloud: { accessToken: sub-${i + 1}-token, subDeviceAddress: "plant-${bus(i)}/${(i % UNITS_PER_BUS) + 1}" }, points: [${points}] }`),
    '',
  ].join('\n');
}

interface Gap { ms: number; cpuMs: number }

/** Gaps of the event loop longer than GAP_MS while `work` runs. */
async function gapsDuring(work: () => Promise<void>): Promise<Gap[]> {
  const gaps: Gap[] = [];
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  const timer = setInterval(() => {
    const now = performance.now();
    const cpu = process.cpuUsage(lastCpu);
    if (now - last > GAP_MS) gaps.push({ ms: now - last, cpuMs: (cpu.user + cpu.system) / 1000 });
    last = now;
    lastCpu = process.cpuUsage();
  }, 2);
  try {
    await work();
    await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    clearInterval(timer);
  }
  return gaps;
}

export interface ReloadStall {
  gaps: Gap[];
  readMs: number;
  planMs: number;
  /** Devices the plan replaces (the first device's poll period changed), or undefined when the reload was refused. */
  replaced: readonly string[] | undefined;
}

/** The event-loop gaps of reading a site of `devices` again and planning the reload, in this process. */
export async function measureReloadStall(devices: number): Promise<ReloadStall> {
  const dir = mkdtempSync(join(tmpdir(), 'fg-bench-reload-stall-'));
  try {
    const file = join(dir, 'site.yaml');
    const env = { ...process.env, FIELDGATE_SITE_MAX_BYTES: String(64 * 1024 * 1024) };
    writeFileSync(file, siteText(dir, devices, '1s'));
    const running = loadConfigWithDigest(file, env).config;
    writeFileSync(file, siteText(dir, devices, '2s'));
    const result: Omit<ReloadStall, 'gaps'> = { readMs: 0, planMs: 0, replaced: undefined };
    const gaps = await gapsDuring(async () => {
      const startedAt = performance.now();
      const read = await readSiteFile(file, env);
      result.readMs = performance.now() - startedAt;
      if (!read.config) throw new Error(`reload stall bench: ${JSON.stringify(read.issues.slice(0, 3))}`);
      await new Promise((resolve) => setImmediate(resolve));
      const planAt = performance.now();
      const decision = planReload(running, keepRunningAddresses(read.config, running).config ?? read.config);
      result.planMs = performance.now() - planAt;
      result.replaced = decision.accepted ? decision.plan.devicesReplaced : undefined;
    });
    return { ...result, gaps };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function row(devices: number, m: ReloadStall): string {
  const longest = [...m.gaps].sort((a, b) => b.ms - a.ms).slice(0, 5).map((g) => `${g.ms.toFixed(0)} (${g.cpuMs.toFixed(0)})`).join(', ');
  return `| ${devices} x 50 | ${longest || 'none'} | ${m.gaps.length} | ${(m.readMs / 1000).toFixed(1)} s | ${m.planMs.toFixed(0)} ms | ${m.replaced?.join(', ') ?? 'refused'} |`;
}

export async function run(log: (line: string) => void): Promise<void> {
  const sizes = (process.env.BENCH_RELOAD_STALL_DEVICES ?? '1000,2000').split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0);
  const load = loadavg()[0];
  const rows: string[] = [];
  for (const devices of sizes) rows.push(row(devices, await measureReloadStall(devices)));
  log('## Reload: event-loop gaps while a site file is read again and the reload planned');
  log('');
  log(`One process holding the running config; a 2 ms timer records gaps longer than ${GAP_MS} ms (CPU ms of the process in each); load average (1 min) ${load.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after.`);
  log('');
  log('| devices x points | longest gaps, ms (CPU ms) | gaps > 20 ms | read | plan | replaced |');
  log('| --- | --- | --- | --- | --- | --- |');
  for (const row of rows) log(row);
  log('');
}
