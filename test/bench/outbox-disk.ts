// Disk bytes written per acknowledged report (from /proc/self/io write_bytes: what this process
// made the kernel write to the block device), for both outbox modes in the same run, at three
// report rates: 10 devices polled every 100 ms (100 reports/s), 10 devices every 1 s (10/s) and
// 2 devices every 1 s (2/s), over Modbus TCP, mosquitto on loopback, the default group commit
// (50 ms). Then the broker is stopped (outage: bytes per report buffered vs. payload bytes) and
// started again (replay: bytes per report replayed).
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OutboxMode } from '../../src/cloud/outbox/outbox-options.js';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import { silentLogger } from '../../src/ops/log.js';
import { Mosquitto } from '../helpers/mosquitto.js';
import { config, device, simulator } from './northbound.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Bytes this process has caused to be written to storage so far. */
export function writeBytes(): number {
  const match = /^write_bytes: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'));
  return match ? Number(match[1]) : 0;
}

export interface DiskRate {
  devices: number;
  pollMs: number;
}

export interface DiskFigures {
  mode: OutboxMode;
  rate: DiskRate;
  healthy: { reports: number; bytesPerReport: number };
  outage: { reports: number; bytesPerReport: number; payloadBytesPerReport: number };
  replay: { reports: number; bytesPerReport: number; seconds: number };
}

const acked = (g: GatewayHandle) => g.status().links.reduce((n, l) => n + l.publishes, 0);
const held = (g: GatewayHandle) => g.status().outbox ?? { depth: 0, bytes: 0 };

export async function measureDiskWrites(mode: OutboxMode, seconds: { healthy: number; outage: number }, rate: DiskRate = { devices: 10, pollMs: 100 }): Promise<DiskFigures> {
  const { devices } = rate;
  const broker = await Mosquitto.start();
  const sim = await simulator(devices);
  // On the real disk (not a tmpfs), or write_bytes would stay 0.
  const dir = mkdtempSync(join(process.env.BENCH_DISK_DIR ?? tmpdir(), 'fg-disk-'));
  try {
    const list = Array.from({ length: devices }, (_, i) => device(i + 1, 10, rate.pollMs, `bus${i}`));
    const base = config(dir, broker.url, sim.tcp?.port ?? 0, list, devices);
    base.gateway.cloud.outbox = { ...base.gateway.cloud.outbox, mode, durableAfterMs: 1000, commitIntervalMs: 50 };
    base.gateway.cloud.replayRatePerS = 500;
    const gateway = await startGateway(base, { logger: silentLogger(), env: {} });
    await sleep(3000);
    let w = writeBytes();
    let a = acked(gateway);
    await sleep(seconds.healthy * 1000);
    const healthyReports = acked(gateway) - a;
    const healthy = { reports: healthyReports, bytesPerReport: (writeBytes() - w) / Math.max(1, healthyReports) };

    await broker.stop();
    await sleep(500);
    w = writeBytes();
    const before = held(gateway);
    await sleep(seconds.outage * 1000);
    const after = held(gateway);
    const outageReports = after.depth - before.depth;
    const outage = {
      reports: outageReports,
      bytesPerReport: (writeBytes() - w) / Math.max(1, outageReports),
      payloadBytesPerReport: (after.bytes - before.bytes) / Math.max(1, outageReports),
    };

    w = writeBytes();
    a = acked(gateway);
    const started = Date.now();
    await broker.restart();
    // Replayed once the backlog is back to what a healthy link holds.
    while (held(gateway).depth > Math.max(5, devices * (1000 / rate.pollMs) / 2) && Date.now() - started < 120_000) await sleep(200);
    const replayed = acked(gateway) - a;
    const replay = { reports: replayed, bytesPerReport: (writeBytes() - w) / Math.max(1, replayed), seconds: (Date.now() - started) / 1000 };
    await gateway.stop();
    return { mode, rate, healthy, outage, replay };
  } finally {
    await sim.close();
    await broker.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The rates of the table: the docs state each figure with its rate (low rates cost more per report). */
const RATES: DiskRate[] = [{ devices: 10, pollMs: 100 }, { devices: 10, pollMs: 1000 }, { devices: 2, pollMs: 1000 }];

export async function run(log: (line: string) => void): Promise<void> {
  log('## Outbox disk writes');
  log('');
  const figures = [];
  for (const rate of RATES) {
    // Enough reports at low rates for whole-page effects to average out.
    const seconds = rate.devices * (1000 / rate.pollMs) >= 100 ? 20 : 40;
    for (const mode of ['memory-first', 'write-ahead'] as const) figures.push(await measureDiskWrites(mode, { healthy: seconds, outage: seconds }, rate));
  }
  log('| mode | reports/s | healthy link: disk bytes per acked report | broker outage: disk bytes per report (payload bytes) | replay after the outage: disk bytes per replayed report |');
  log('| --- | --- | --- | --- | --- |');
  for (const f of figures) {
    const perS = f.rate.devices * (1000 / f.rate.pollMs);
    log(`| ${f.mode} | ${perS} (${f.rate.devices} devices every ${f.rate.pollMs} ms) | ${f.healthy.bytesPerReport.toFixed(1)} (${f.healthy.reports} reports) | ${f.outage.bytesPerReport.toFixed(0)} (payload ${f.outage.payloadBytesPerReport.toFixed(0)}: ${(f.outage.bytesPerReport / Math.max(1, f.outage.payloadBytesPerReport)).toFixed(2)}x; ${f.outage.reports} reports) | ${f.replay.bytesPerReport.toFixed(0)} (${f.replay.reports} reports in ${f.replay.seconds.toFixed(1)} s) |`);
  }
  log('');
}
