// Idle cost (`npm run bench -- idle`): one device of 10 holding registers polled every 1 s over
// Modbus TCP, health and metrics on (the service's default) and scraped every 15 s as a Prometheus
// would, the daemon a child process with the unit's node flags. This checkout and a baseline (the
// commit this branch started from, or the previous commit on main; BENCH_BASELINE_REF to choose)
// are each built (checkouts.ts) and run side by side in the same run,
// without and with a cloud link (the emulator). Per daemon: wake-ups of the main thread per second
// (its voluntary context switches) and CPU seconds of all its threads per 1,000 registers read.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type Emulator } from '../../packages/emulator/src/index.js';
import type { Simulation } from '../../packages/simulator/src/index.js';
import { parseSeed } from '../../packages/emulator/src/state/seed.js';
import { silentLogger } from '../../src/ops/log.js';
import { mainThreadWakeups, threadCpuSeconds } from '../arm64/proc-cpu.js';
import { freePort } from '../helpers/mosquitto.js';
import { baselineRef, commitCheckout, currentCheckout, type Checkout } from './checkouts.js';
import { BENCH_PROJECT_KEY, seedText } from './gateway.js';
import { benchNodeFlags, simulator } from './northbound.js';

const POINTS = 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Cloud { emulator: Emulator; mqttUrl: string }

function siteFile(dir: string, unit: number, simPort: number, healthPort: number, cloud: Cloud | undefined, webPort?: number): string {
  const points = Array.from({ length: POINTS }, (_, p) => `{ id: p${p}, table: holding, address: ${p} }`).join(', ');
  const link = cloud ? `, cloud: { accessToken: direct-${unit}-token }` : '';
  return [
    'gateway:', `  stateDir: ${join(dir, 'state')}`, '  logLevel: warn', `  health: { enabled: true, port: ${healthPort} }`,
    ...(webPort !== undefined ? [`  web: { port: ${webPort} }`] : []),
    ...(cloud ? ['  cloud:', `    mqttUrl: ${cloud.mqttUrl}`, `    apiBaseUrl: http://127.0.0.1:${cloud.emulator.httpPort}`, `    projectKey: ${BENCH_PROJECT_KEY}`, '    syncPeriodMs: 0'] : []),
    'buses:', `  - { name: plant, kind: tcp, host: 127.0.0.1, port: ${simPort}, timeoutMs: 1000 }`,
    'devices:', `  - { name: meter-${unit}, bus: plant, unitId: ${unit}, pollIntervalMs: 1s, points: [${points}]${link} }`, '',
  ].join('\n');
}

export interface IdleFigures {
  label: string;
  wakeupsPerS: number;
  cpuSPer1000Registers: number;
  registersPerS: number;
  rssAnonMb: number;
  /** Scrapes of /metrics and /healthz that failed (a daemon that stopped answering). */
  failedScrapes: number;
}

interface Daemon {
  pid: number;
  unit: number;
  healthPort: number;
  stop(): Promise<void>;
}

async function startDaemon(checkout: Checkout, dir: string, unit: number, simPort: number, cloud: Cloud | undefined, web = false): Promise<Daemon> {
  const healthPort = await freePort();
  const site = join(dir, `site-${unit}.yaml`);
  writeFileSync(site, siteFile(join(dir, `unit-${unit}`), unit, simPort, healthPort, cloud, web ? await freePort() : undefined));
  const child = spawn(process.execPath, [...benchNodeFlags(), ...checkout.entry, 'run', '--config', site], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise((r) => child.once('exit', r));
  return {
    pid: child.pid ?? 0, unit, healthPort,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Scrapes /metrics and /healthz of every daemon every `everyS`; returns the stop function and the failure count. */
function scrapeEvery(daemons: readonly Daemon[], everyS: number): { stop(): void; failed: Map<number, number> } {
  const failed = new Map(daemons.map((d) => [d.unit, 0]));
  const scrape = () => {
    for (const d of daemons) {
      for (const path of ['/metrics', '/healthz']) {
        fetch(`http://127.0.0.1:${d.healthPort}${path}`).then((r) => r.text()).catch(() => failed.set(d.unit, (failed.get(d.unit) ?? 0) + 1));
      }
    }
  };
  const timer = setInterval(scrape, everyS * 1000);
  return { stop: () => clearInterval(timer), failed };
}

async function untilEveryUnitAnswered(sim: Simulation, units: readonly number[], timeoutS: number): Promise<void> {
  const until = performance.now() + timeoutS * 1000;
  while (units.some((u) => sim.simulator.counters(u).replies === 0)) {
    if (performance.now() > until) throw new Error(`not every daemon polled within ${timeoutS} s`);
    await sleep(200);
  }
}

export interface IdleOptions {
  warmupS: number;
  measureS: number;
  scrapeEveryS: number;
  cloud: boolean;
  /** Per checkout: the commissioning page on (gateway.web, nobody looking); off when absent. */
  web?: readonly boolean[];
}

/** Every checkout's daemon at once (same load, same minute), each polling its own unit of one simulator. */
export async function measureIdle(checkouts: readonly Checkout[], options: IdleOptions): Promise<IdleFigures[]> {
  const sim = await simulator(checkouts.length);
  const dir = mkdtempSync(join(tmpdir(), 'fg-bench-idle-'));
  const emulator = options.cloud
    ? await startEmulator({ httpPort: 0, mqttPort: 0, tcpPort: 0, host: '127.0.0.1', seed: parseSeed(seedText(checkouts.length), Date.now()), logger: silentLogger() })
    : undefined;
  const cloud = emulator ? { emulator, mqttUrl: `mqtt://127.0.0.1:${emulator.mqttPort}` } : undefined;
  const daemons: Daemon[] = [];
  try {
    for (const [i, checkout] of checkouts.entries()) daemons.push(await startDaemon(checkout, dir, i + 1, sim.tcp?.port ?? 0, cloud, options.web?.[i] ?? false));
    const scraper = scrapeEvery(daemons, options.scrapeEveryS);
    try {
      await untilEveryUnitAnswered(sim, daemons.map((d) => d.unit), 120);
      // Start-up, then V8's memory reducer (a few full GCs some seconds after start), are not idle cost.
      await sleep(options.warmupS * 1000);
      const read = (d: Daemon) => ({ cpu: threadCpuSeconds(d.pid), wakeups: mainThreadWakeups(d.pid), replies: sim.simulator.counters(d.unit).replies, at: performance.now() });
      const before = daemons.map(read);
      const failedBefore = daemons.map((d) => scraper.failed.get(d.unit) ?? 0);
      await sleep(options.measureS * 1000);
      const after = daemons.map(read);
      return daemons.map((d, i) => {
        const seconds = (after[i].at - before[i].at) / 1000;
        const registers = (after[i].replies - before[i].replies) * POINTS;
        const status = readFileSync(`/proc/${d.pid}/status`, 'utf8');
        return {
          label: checkouts[i].label,
          wakeupsPerS: (after[i].wakeups - before[i].wakeups) / seconds,
          cpuSPer1000Registers: registers > 0 ? ((after[i].cpu - before[i].cpu) * 1000) / registers : Number.NaN,
          registersPerS: registers / seconds,
          rssAnonMb: Number(/RssAnon:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024,
          failedScrapes: (scraper.failed.get(d.unit) ?? 0) - failedBefore[i],
        };
      });
    } finally {
      scraper.stop();
    }
  } finally {
    await Promise.all(daemons.map((d) => d.stop()));
    await emulator?.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(log: (line: string) => void): Promise<void> {
  const options = { warmupS: 30, measureS: 60, scrapeEveryS: 15 };
  const baseline = commitCheckout(baselineRef());
  const current = currentCheckout();
  try {
    const load = loadavg()[0];
    const rows: string[] = [];
    for (const cloud of [false, true]) {
      const [base, mine] = await measureIdle([baseline, current], { ...options, cloud });
      const change = (mine.cpuSPer1000Registers / base.cpuSPer1000Registers - 1) * 100;
      const name = cloud ? 'with a cloud link (emulator, MQTT)' : 'no cloud link';
      for (const f of [base, mine]) {
        rows.push(`| ${name} | ${f.label} | ${f.wakeupsPerS.toFixed(1)} | ${f.cpuSPer1000Registers.toFixed(3)} | ${f === mine ? `${change.toFixed(0)} %` : ''} | ${f.registersPerS.toFixed(1)} | ${f.rssAnonMb.toFixed(1)} MB | ${f.failedScrapes} |`);
      }
    }
    log('## Idle cost');
    log('');
    log(`One device of ${POINTS} holding registers polled every 1 s over Modbus TCP, health and metrics on, /metrics and /healthz scraped every ${options.scrapeEveryS} s;`
      + ` daemon a child process (node ${benchNodeFlags().join(' ')}), ${options.warmupS} s warm-up, ${options.measureS} s measured, baseline and this checkout side by side;`
      + ` load average (1 min) ${load.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after.`);
    log('');
    log('| case | daemon | wake-ups/s, main thread (target <= 20) | CPU s per 1,000 registers (all threads) | vs baseline (target <= -60 %) | registers/s | RssAnon at the end | failed scrapes |');
    log('| --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const row of rows) log(row);
    log('');
  } finally {
    baseline.cleanup();
  }
}
