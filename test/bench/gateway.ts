// Gateway mode against per-device links, the same site run twice in one run: N devices x P points
// polled every second over Modbus TCP (a simulated server per 200 units, a unit id each), the emulator as the
// cloud (a seed of its own: N direct devices, and the identity with N sub-devices bound to it at
// the addresses the site file sets), the daemon a child process with the unit's node flags. Per
// mode: the daemon's RSS after warm-up, points/s stored by the emulator, MQTT PUBLISH packets/s into
// the broker (counted on the wire), and the daemon's CPU seconds per 1,000 points stored. Then
// gateway mode at 100, 500, 1,000 and 2,000 devices, with the memory peak at start-up and at a
// reload that changes one device; optionally (BENCH_GATEWAY_BASELINE=1) this checkout against the
// baseline commit (checkouts.ts) in the same run. A run where the cloud refuses reports fails.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type Emulator } from '../../packages/emulator/src/index.js';
import { parseSeed } from '../../packages/emulator/src/state/seed.js';
import { silentLogger } from '../../src/ops/log.js';
import { cpuSeconds } from '../arm64/proc-cpu.js';
import { benchNodeFlags, simulator } from './northbound.js';
import { baselineRef, commitCheckout, currentCheckout, type Checkout } from './checkouts.js';
import { PublishCounter } from './publish-counter.js';
import { RefusalWatch, reloadPeak, rssKb, StoredPoints, untilEveryDeviceReports } from './gateway-probes.js';

export type CloudMode = 'direct' | 'gateway';

export interface GatewayBenchOptions {
  devices: number;
  points: number;
  warmupS: number;
  measureS: number;
  /** How the daemon is started after node's flags; default the built CLI, as the unit runs it. */
  entry?: string[];
  /** Where the seed binds each sub-device; default where the site file puts it (a test binds elsewhere to see the bench fail). */
  bindAt?(index: number): string;
}

export interface ModeFigures {
  mode: CloudMode;
  /** VmRSS, 1 s samples over the measuring window (after warm-up): max and mean. */
  rssMaxMb: number;
  rssMeanMb: number;
  /** VmHWM: the peak including start-up. */
  rssPeakMb: number;
  /** At the end of the window: RssAnon (the daemon's own memory) and RssFile (mapped files, mostly the node binary's pages, shared). */
  rssAnonMb: number;
  rssFileMb: number;
  /** RssAnon, mean of the 1 s samples: steadier than one reading, which moves with each GC. */
  rssAnonMeanMb: number;
  pointsPerS: number;
  messagesPerS: number;
  bytesPerS: number;
  cpuSPer1000Points: number;
  /** Devices of which the cloud stored at least one report in the window. */
  devicesReporting: number;
  /** From the daemon's spawn until every device had a report stored. */
  allReportingAfterS: number;
  /** With `reload`: VmHWM from a reset just before a reload that changes one device until 3 s after it applied, and how long it took. */
  reloadPeakMb?: number;
  reloadS?: number;
}

/** A sub-device's address: the same in the site file and in the seed's binding, whatever the daemon's default. */
export function subAddress(index: number): string {
  return `plant-${Math.floor(index / UNITS_PER_BUS)}/${(index % UNITS_PER_BUS) + 1}`;
}

export const BENCH_PROJECT_KEY = 'bench-project-key';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The emulator's seed: N direct devices (`direct-N-token`), and the identity with N sub-devices (`sub-N-token`). */
export function seedText(devices: number, bindAt: (index: number) => string = subAddress): string {
  const rows = Array.from({ length: devices }, (_, i) => {
    const n = i + 1;
    return `  - { id: dev-direct-${n}, name: direct ${n}, type: type-meter, device_key: direct-${n}, access_token: direct-${n}-token }\n`
      + `  - { id: dev-sub-${n}, name: sub ${n}, type: type-sub, device_key: sub-${n}, access_token: sub-${n}-token, gateway: dev-fieldgate, sub_device_addr: "${bindAt(i)}" }\n`;
  }).join('');
  return `project: { id: prj-bench, name: bench, project_key: ${BENCH_PROJECT_KEY} }
device_types:
  - { id: type-meter, name: meter, conn_protocol: mqtt, conn_type: "1" }
  - { id: type-gateway, name: fieldgate, kind: gateway, conn_protocol: mqtt, conn_type: "3" }
  - { id: type-sub, name: sub-meter, kind: sub_device, conn_protocol: mqtt }
devices:
  - { id: dev-fieldgate, name: fieldgate, type: type-gateway, device_key: fieldgate-1, access_token: gw-token }
${rows}`;
}

/** Modbus unit ids stop at 247: a larger site spreads its devices over several simulated servers, a bus each. */
const UNITS_PER_BUS = 200;

/** `firstPeriod`: the first device's poll period (a reload changes it). */
function siteFile(dir: string, mode: CloudMode, mqttUrl: string, emulator: Emulator, simPorts: readonly number[], options: GatewayBenchOptions, firstPeriod = '1s'): string {
  const cloudOf = (i: number) => (mode === 'gateway' ? `{ accessToken: sub-${i + 1}-token, subDeviceAddress: "${subAddress(i)}" }` : `{ accessToken: direct-${i + 1}-token }`);
  const points = Array.from({ length: options.points }, (_, p) => `{ id: p${p}, table: holding, address: ${p}, report: { mode: always } }`).join(', ');
  return [
    'gateway:', `  stateDir: ${join(dir, 'state')}`, '  logLevel: warn', '  health: { enabled: false }',
    '  cloud:', `    mode: ${mode}`, ...(mode === 'gateway' ? ['    identity: { accessToken: gw-token }'] : []),
    `    mqttUrl: ${mqttUrl}`, `    apiBaseUrl: http://127.0.0.1:${emulator.httpPort}`, `    projectKey: ${BENCH_PROJECT_KEY}`, '    syncPeriodMs: 0',
    'buses:', ...simPorts.map((port, b) => `  - { name: plant-${b}, kind: tcp, host: 127.0.0.1, port: ${port}, timeoutMs: 1000 }`), 'devices:',
    ...Array.from({ length: options.devices }, (_, i) => {
      const [bus, unit] = [Math.floor(i / UNITS_PER_BUS), (i % UNITS_PER_BUS) + 1];
      return `  - { name: dev-${i + 1}, bus: plant-${bus}, unitId: ${unit}, pollIntervalMs: ${i === 0 ? firstPeriod : '1s'}, cloud: ${cloudOf(i)}, points: [${points}] }`;
    }),
    '',
  ].join('\n');
}

export async function measureMode(mode: CloudMode, options: GatewayBenchOptions & { reload?: boolean }): Promise<ModeFigures> {
  const emulator = await startEmulator({ httpPort: 0, mqttPort: 0, tcpPort: 0, host: '127.0.0.1', seed: parseSeed(seedText(options.devices, options.bindAt), Date.now()), logger: silentLogger() });
  const counter = await PublishCounter.start(emulator.mqttPort);
  const sims = await Promise.all(Array.from({ length: Math.ceil(options.devices / UNITS_PER_BUS) }, (_, b) => simulator(Math.min(UNITS_PER_BUS, options.devices - b * UNITS_PER_BUS))));
  const dir = mkdtempSync(join(tmpdir(), 'fg-bench-gw-'));
  const ids = Array.from({ length: options.devices }, (_, i) => (mode === 'gateway' ? `dev-sub-${i + 1}` : `dev-direct-${i + 1}`));
  const stored = new StoredPoints(emulator, ids);
  const what = `gateway bench (${mode}, ${options.devices} devices)`;
  try {
    const site = join(dir, 'site.yaml');
    const write = (firstPeriod?: string) => writeFileSync(site, siteFile(dir, mode, counter.url, emulator, sims.map((sim) => sim.tcp?.port ?? 0), options, firstPeriod));
    write();
    const spawnedAt = performance.now();
    // A site of 2,000 devices x 50 points written out in full is ~6 MB: above the default 4 MiB bound.
    const env = { ...process.env, FIELDGATE_SITE_MAX_BYTES: String(64 * 1024 * 1024) };
    const child = spawn(process.execPath, [...benchNodeFlags(), ...(options.entry ?? ['bin/fieldgate.js']), 'run', '--config', site], { stdio: ['ignore', 'pipe', 'pipe'], env });
    const refusals = new RefusalWatch(child, process.env.BENCH_DAEMON_LOGS !== undefined);
    const pid = child.pid ?? 0;
    const exited = new Promise((r) => child.once('exit', r));
    try {
      // Start-up (from source under a loaded test run, many seconds) is not part of the warm-up.
      const silent = await untilEveryDeviceReports(stored, ids, 300, refusals);
      refusals.check(what);
      if (silent.length > 0) throw new Error(`${what}: ${silent.length} device(s) without a stored report after 300 s (${silent.slice(0, 5).join(', ')})`);
      const allReportingAfterS = (performance.now() - spawnedAt) / 1000;
      await sleep(options.warmupS * 1000);
      const before = { points: stored.take(), publishes: counter.publishes, bytes: counter.publishBytes, cpu: cpuSeconds(pid), at: performance.now() };
      const samples: number[] = [];
      const anonSamples: number[] = [];
      for (let t = 0; t < options.measureS; t += 1) {
        await sleep(1000);
        const kb = rssKb(pid);
        samples.push(kb.rss);
        anonSamples.push(kb.anon);
        stored.take();
      }
      const after = { points: stored.take(), publishes: counter.publishes, bytes: counter.publishBytes, cpu: cpuSeconds(pid), at: performance.now() };
      const end = rssKb(pid);
      const seconds = (after.at - before.at) / 1000;
      const points = after.points.points - before.points.points;
      refusals.check(what);
      const reload = options.reload ? await reloadPeak(pid, dir, () => write('2s')) : undefined;
      refusals.check(`${what}, after the reload`);
      return {
        mode,
        rssMaxMb: Math.max(...samples) / 1024,
        rssMeanMb: samples.reduce((a, b) => a + b, 0) / samples.length / 1024,
        // The kernel updates VmHWM lazily (per-thread RSS counters): it can trail a VmRSS sample by a few pages.
        rssPeakMb: Math.max(end.hwm, ...samples) / 1024,
        rssAnonMb: end.anon / 1024,
        rssFileMb: end.file / 1024,
        rssAnonMeanMb: anonSamples.reduce((a, b) => a + b, 0) / anonSamples.length / 1024,
        pointsPerS: points / seconds,
        messagesPerS: (after.publishes - before.publishes) / seconds,
        bytesPerS: (after.bytes - before.bytes) / seconds,
        cpuSPer1000Points: points > 0 ? ((after.cpu - before.cpu) * 1000) / points : Number.NaN,
        devicesReporting: after.points.perDevice.filter((n, i) => n > before.points.perDevice[i]).length,
        allReportingAfterS,
        ...(reload ? { reloadPeakMb: reload.peakMb, reloadS: reload.seconds } : {}),
      };
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  } finally {
    await counter.close();
    await Promise.all(sims.map((sim) => sim.close()));
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `reload`: the gateway-mode run also measures a reload's peak. */
export async function measureGatewayModes(options: GatewayBenchOptions & { reload?: boolean }): Promise<{ direct: ModeFigures; gateway: ModeFigures; load: number[] }> {
  const loadBefore = loadavg();
  const direct = await measureMode('direct', { ...options, reload: false });
  const gateway = await measureMode('gateway', options);
  const loadAfter = loadavg();
  return { direct, gateway, load: [loadBefore[0], loadAfter[0]] };
}

function costRow(devices: number, points: number, label: string, f: ModeFigures): string {
  return `| ${devices} x ${points} | ${label} | ${f.pointsPerS.toFixed(0)} of ${devices * points} | ${f.messagesPerS.toFixed(1)} | ${f.cpuSPer1000Points.toFixed(4)} | `
    + `${f.rssAnonMeanMb.toFixed(1)} MB (end ${f.rssAnonMb.toFixed(1)}) | ${f.rssFileMb.toFixed(1)} MB | ${f.rssPeakMb.toFixed(1)} MB | ${f.devicesReporting} |`;
}

/** Gateway mode at 100 (figures already taken for this checkout) and 500 devices, this checkout against the baseline (BENCH_GATEWAY_BASELINE=1). */
async function costPerReport(log: (line: string) => void, options: GatewayBenchOptions, current: Checkout, atHundred: ModeFigures): Promise<void> {
  const baseline = commitCheckout(baselineRef());
  try {
    const load = loadavg()[0];
    const rows: string[] = [];
    for (const devices of [100, 500]) {
      const base = await measureMode('gateway', { ...options, devices, entry: baseline.entry });
      const mine = devices === 100 ? atHundred : await measureMode('gateway', { ...options, devices, entry: current.entry });
      rows.push(costRow(devices, options.points, baseline.label, base), costRow(devices, options.points, current.label, mine));
    }
    log('### Gateway mode: cost per report, against the baseline in the same run');
    log('');
    log(`Gateway identity, devices x points every 1 s over Modbus TCP (up to ${UNITS_PER_BUS} units per simulated server, a bus each); load average (1 min) ${load.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after.`);
    log('');
    log('| devices x points | daemon | points/s stored | MQTT PUBLISH/s | CPU s per 1,000 points | RssAnon, mean of 1 s samples (target <= 24 MB at 100) | RssFile | VmHWM | devices reporting |');
    log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const row of rows) log(row);
    log('');
  } finally {
    baseline.cleanup();
  }
}

/** Site sizes of the scale table (BENCH_GATEWAY_DEVICES, comma-separated). */
export function scaleSizes(env: NodeJS.ProcessEnv = process.env): number[] {
  return (env.BENCH_GATEWAY_DEVICES ?? '100,500,1000,2000').split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0);
}

function scaleRow(devices: number, points: number, f: ModeFigures): string {
  const mb = (v: number | undefined) => (v === undefined ? 'n/a' : `${v.toFixed(1)} MB`);
  return `| ${devices} x ${points} | ${f.pointsPerS.toFixed(0)} of ${devices * points} | ${f.messagesPerS.toFixed(1)} | ${f.cpuSPer1000Points.toFixed(4)} | `
    + `${f.rssAnonMeanMb.toFixed(1)} MB (end ${f.rssAnonMb.toFixed(1)}) | ${mb(f.rssPeakMb)} | ${mb(f.reloadPeakMb)} (${f.reloadS?.toFixed(1) ?? 'n/a'} s) | ${f.allReportingAfterS.toFixed(1)} s | ${f.devicesReporting} |`;
}

/** Gateway mode as a site grows: one row per size, each a fresh emulator, simulators and daemon. */
async function scale(log: (line: string) => void, options: GatewayBenchOptions, atHundred: ModeFigures | undefined): Promise<void> {
  const load = loadavg()[0];
  const rows: string[] = [];
  for (const devices of scaleSizes()) {
    const figures = devices === options.devices && atHundred ? atHundred : await measureMode('gateway', { ...options, devices, reload: true });
    rows.push(scaleRow(devices, options.points, figures));
    process.stderr.write(`${rows[rows.length - 1]}\n`);
  }
  log('### Gateway mode as the site grows (100 to 2,000 devices)');
  log('');
  log(`Gateway identity, devices x ${options.points} points every 1 s over Modbus TCP (up to ${UNITS_PER_BUS} units per simulated server, a bus each; every device's address set in the site file and bound in the seed),`
    + ` the site file written out in full; ${options.warmupS} s warm-up, ${options.measureS} s measured; the reload changes one device's poll period; load average (1 min) ${load.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after.`);
  log('');
  log('| devices x points | points/s stored of polled | MQTT PUBLISH/s | CPU s per 1,000 points | RssAnon, mean of 1 s samples (end) | start-up VmHWM | VmHWM of a reload changing one device (took) | all reporting after | devices reporting in the window |');
  log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const row of rows) log(row);
  log('');
}

export async function run(log: (line: string) => void): Promise<void> {
  const current = currentCheckout();
  const options = { devices: 100, points: 50, warmupS: 15, measureS: 30, entry: current.entry };
  const { direct, gateway, load } = await measureGatewayModes({ ...options, reload: true });
  const ratio = (g: number, d: number) => (d > 0 ? (g / d).toFixed(2) : 'n/a');
  log('## Gateway mode');
  log('');
  log(`${options.devices} devices x ${options.points} points every 1 s over Modbus TCP, emulator as the cloud; daemon a child process (node ${benchNodeFlags().join(' ')});`
    + ` ${options.warmupS} s warm-up, ${options.measureS} s measured; load average (1 min) ${load[0].toFixed(1)} before, ${load[1].toFixed(1)} after.`);
  log('');
  log('| measure | per-device links | gateway identity | gateway / per-device |');
  log('| --- | --- | --- | --- |');
  log(`| RSS after warm-up, max of 1 s samples (target <= 60 MB in gateway mode) | ${direct.rssMaxMb.toFixed(1)} MB | ${gateway.rssMaxMb.toFixed(1)} MB | ${ratio(gateway.rssMaxMb, direct.rssMaxMb)} |`);
  log(`| RSS after warm-up, mean | ${direct.rssMeanMb.toFixed(1)} MB | ${gateway.rssMeanMb.toFixed(1)} MB | ${ratio(gateway.rssMeanMb, direct.rssMeanMb)} |`);
  log(`| of which anonymous (RssAnon: heap, code, buffers), end of window | ${direct.rssAnonMb.toFixed(1)} MB | ${gateway.rssAnonMb.toFixed(1)} MB | ${ratio(gateway.rssAnonMb, direct.rssAnonMb)} |`);
  log(`| of which file-backed (RssFile: the node binary's pages, native addons; shared) | ${direct.rssFileMb.toFixed(1)} MB | ${gateway.rssFileMb.toFixed(1)} MB | ${ratio(gateway.rssFileMb, direct.rssFileMb)} |`);
  log(`| start-up peak (VmHWM) | ${direct.rssPeakMb.toFixed(1)} MB | ${gateway.rssPeakMb.toFixed(1)} MB | ${ratio(gateway.rssPeakMb, direct.rssPeakMb)} |`);
  log(`| points/s stored by the cloud (${options.devices * options.points} polled per s) | ${direct.pointsPerS.toFixed(0)} | ${gateway.pointsPerS.toFixed(0)} | ${ratio(gateway.pointsPerS, direct.pointsPerS)} |`);
  log(`| MQTT PUBLISH packets/s into the broker | ${direct.messagesPerS.toFixed(1)} | ${gateway.messagesPerS.toFixed(1)} | ${ratio(gateway.messagesPerS, direct.messagesPerS)} |`);
  log(`| MQTT PUBLISH bytes/s into the broker | ${direct.bytesPerS.toFixed(0)} | ${gateway.bytesPerS.toFixed(0)} | ${ratio(gateway.bytesPerS, direct.bytesPerS)} |`);
  log(`| daemon CPU seconds per 1,000 points stored | ${direct.cpuSPer1000Points.toFixed(3)} | ${gateway.cpuSPer1000Points.toFixed(3)} | ${ratio(gateway.cpuSPer1000Points, direct.cpuSPer1000Points)} |`);
  log(`| devices with reports stored in the window | ${direct.devicesReporting} | ${gateway.devicesReporting} | |`);
  log('');
  await scale(log, options, gateway);
  if (process.env.BENCH_GATEWAY_BASELINE) await costPerReport(log, options, current, gateway);
}
