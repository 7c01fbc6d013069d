// Northbound benchmarks: points/s from poll to PUBACK vs raw mqtt.js publishing, push -> register
// latency on a saturated bus, and the RSS of a gateway with 100 devices and 100 links.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import type { Config } from '../../src/core/config/config.js';
import type { DeviceConfig, PointConfig } from '../../src/core/config/site-types.js';
import { compiledConfig } from '../../src/ops/site-file.js';
import { startGateway } from '../../src/main.js';
import { silentLogger } from '../../src/ops/log.js';
import { parseSimMap, startSimulation, type Simulation } from '../../packages/simulator/src/index.js';
import { Forwarder, TokenBucket } from '../../src/cloud/forwarding/forwarder.js';
import { MqttLink } from '../../src/cloud/mqtt/link.js';
import { Outbox } from '../../src/cloud/outbox/outbox.js';
import { Reporter } from '../../src/device/reporter.js';
import { asEpoch, asMono } from '../../src/core/time.js';
import { Mosquitto } from '../helpers/mosquitto.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function point(id: string, address: number, writable = false): PointConfig {
  return { id, table: 'holding', address, type: 'uint16', bit: 0, length: 1, wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0, writable, report: { mode: 'always', deadband: 0, deadbandKind: 'absolute', maxSilenceMs: 0 } };
}

export function device(unit: number, points: number, pollIntervalMs: number, bus: string): DeviceConfig {
  return {
    name: `dev-${unit}`, bus, unitId: unit, pollIntervalMs, commands: [], streams: [],
    limits: { maxRegistersPerRead: 125, maxBitsPerRead: 2000, maxGap: 8, forceMultiWrite: false },
    points: Array.from({ length: points }, (_, i) => point(`p${i}`, i, i === 0)),
    cloud: { accessToken: `token-${unit}`, projectKey: 'pk', allowCreate: false },
  };
}

export async function simulator(units: number): Promise<Simulation> {
  const text = `units:\n${Array.from({ length: units }, (_, i) => `  ${i + 1}:\n    size: { holding: 200 }\n    dynamic:\n      - { table: holding, address: 1, counter: { perSecond: 1000 } }\n`).join('')}`;
  const map = parseSimMap(text);
  if (!map.ok) throw new Error(map.problems.join('; '));
  return startSimulation({ map: map.map, logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 } });
}

export function config(stateDir: string, mqttUrl: string, simPort: number, devices: DeviceConfig[], buses: number): Config {
  return compiledConfig({
      stateDir, logLevel: 'silent', health: { enabled: false, host: '127.0.0.1', port: 9180 },
      cloud: {
        mqttUrl, keepaliveS: 60, connectTimeoutMs: 10_000, httpTimeoutMs: 10_000, syncPeriodMs: 0, publishWindow: 100, replayRatePerS: 100_000,
        reconnect: { initialMs: 100, maxMs: 1000, jitter: 0.1 }, outbox: { maxBytes: 256 * 1024 * 1024, commitIntervalMs: 20 },
        rateQueue: { ratePerS: 10, concurrency: 2, maxPending: 100, retries: 1 }, maxInboundBytes: 65536, drainMs: 0,
        inbound: { maxKeys: 1000, maxPending: 64, busShare: 0.5 },
      },
    }, {
      buses: Array.from({ length: buses }, (_, i) => ({
        kind: 'tcp' as const, name: `bus${i}`, host: '127.0.0.1', port: simPort, timeoutMs: 1000, maxInFlight: 1,
        reconnect: { initialMs: 100, maxMs: 1000, jitter: 0.1 }, cooldown: { afterTimeouts: 3, initialMs: 1000, maxMs: 5000 }, busyRetries: 1,
      })),
      devices,
    });
}

export interface Throughput { pointsPerS: number; rawPointsPerS: number; reports: number }

/** Poll -> outbox -> PUBACK for `seconds`, then raw mqtt.js with the same payloads and window. */
export async function measureThroughput(seconds: number, devices = 8, points = 100): Promise<Throughput> {
  const broker = await Mosquitto.start();
  const sim = await simulator(devices);
  const dir = mkdtempSync(join(tmpdir(), 'fg-bench-'));
  try {
    const list = Array.from({ length: devices }, (_, i) => device(i + 1, points, 5, `bus${i}`));
    const gateway = await startGateway(config(dir, broker.url, sim.tcp?.port ?? 0, list, devices), { logger: silentLogger(), env: {} });
    await sleep(1000);
    const acked = () => gateway.status().links.reduce((n, l) => n + l.publishes, 0);
    const a0 = acked();
    await sleep(seconds * 1000);
    const reports = acked() - a0;
    await gateway.stop();
    const raw = await rawPublish(broker.url, points, seconds);
    return { pointsPerS: (reports * points) / seconds, rawPointsPerS: raw, reports };
  } finally {
    await sim.close();
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The northbound half alone, as fast as it goes: samples fed straight into the Reporter ->
 * outbox (SQLite, group commit) -> forwarder -> one link -> PUBACK, with the outbox bounded.
 */
export async function measureNorthboundOnly(seconds: number, points = 100): Promise<{ pointsPerS: number; rawPointsPerS: number }> {
  const broker = await Mosquitto.start();
  const dir = mkdtempSync(join(tmpdir(), 'fg-bench-'));
  try {
    const dev = device(1, points, 1000, 'bus0');
    let forwarder: Forwarder | undefined;
    const outbox = new Outbox({ path: join(dir, 'outbox.sqlite'), flushIntervalMs: 20, onCommit: () => forwarder?.notify() });
    const reporter = new Reporter([dev], outbox, silentLogger());
    const link = new MqttLink({
      name: dev.name, url: broker.url, credentials: async () => ({ clientId: 'nb', username: 't', password: 'p' }), streams: [],
      keepaliveS: 60, connectTimeoutMs: 5000, reconnect: { initialMs: 100, maxMs: 1000, jitter: 0 }, log: silentLogger(),
    });
    forwarder = new Forwarder({ device: dev.name, outbox, link, log: silentLogger(), window: 100, pacer: new TokenBucket(1_000_000, 1000) });
    link.start();
    forwarder.start();
    while (!link.isUp) await sleep(10);
    const values = Object.fromEntries(dev.points.map((p, i) => [p.id, i]));
    const started = performance.now();
    const a0 = forwarder.stats().acked;
    let n = 0;
    while (performance.now() - started < seconds * 1000) {
      // Bounded: feed while the backlog is small, as a poller's period would.
      if (outbox.stats().depth + outbox.stats().buffered < 5000) {
        for (let i = 0; i < 200; i += 1) {
          n += 1;
          reporter.onSample({ device: dev.name, ts: asEpoch(n), at: asMono(n), values, errors: [] });
        }
      }
      await new Promise((r) => setImmediate(r));
    }
    const acked = forwarder.stats().acked - a0;
    forwarder.stop();
    await link.stop();
    outbox.close();
    const raw = await rawPublish(broker.url, points, seconds);
    return { pointsPerS: (acked * points) / seconds, rawPointsPerS: raw };
  } finally {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function rawPublish(url: string, points: number, seconds: number): Promise<number> {
  const payload = Buffer.from(JSON.stringify(Object.fromEntries(Array.from({ length: points }, (_, i) => [`p${i}`, i]))));
  const client = await mqtt.connectAsync(url, { clientId: 'raw-baseline', protocolVersion: 4 });
  let sent = 0;
  const end = Date.now() + seconds * 1000;
  // The same window as the forwarder: 100 publishes in flight, each resolved on PUBACK.
  await Promise.all(Array.from({ length: 100 }, async () => {
    while (Date.now() < end) {
      await client.publishAsync('attributes', payload, { qos: 1 });
      sent += 1;
    }
  }));
  await client.endAsync();
  return (sent * points) / seconds;
}

/** attributes/push -> the register holds the value, while the device is polled back to back. */
export async function measurePushLatency(samples: number): Promise<{ p50: number; p99: number; max: number }> {
  const broker = await Mosquitto.start();
  const sim = await simulator(1);
  const dir = mkdtempSync(join(tmpdir(), 'fg-bench-'));
  try {
    const gateway = await startGateway(config(dir, broker.url, sim.tcp?.port ?? 0, [device(1, 120, 1, 'bus0')], 1), { logger: silentLogger(), env: {} });
    await sleep(1000);
    const client = await mqtt.connectAsync(broker.url, { clientId: 'pusher' });
    const latencies: number[] = [];
    for (let i = 0; i < samples; i += 1) {
      const value = 10_000 + i;
      const t0 = performance.now();
      await client.publishAsync('attributes/push', JSON.stringify({ p0: value }), { qos: 0 });
      while (sim.simulator.getRegister(1, 'holding', 0) !== value) {
        if (performance.now() - t0 > 2000) break;
        await new Promise((r) => setImmediate(r));
      }
      latencies.push(performance.now() - t0);
    }
    await client.endAsync();
    await gateway.stop();
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
    return { p50: at(0.5), p99: at(0.99), max: latencies[latencies.length - 1] };
  } finally {
    await sim.close();
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The node flags of the shipped unit's ExecStart, so the benchmark runs the daemon as the service does. */
export function serviceNodeFlags(unitText = readFileSync('systemd/fieldgate.service', 'utf8')): string[] {
  const exec = /^ExecStart=(\S+)\s+(.*?)\s*\S*bin\/fieldgate\.js\b/m.exec(unitText);
  if (!exec || !/\/node$/.test(exec[1])) throw new Error('systemd/fieldgate.service: ExecStart does not run node bin/fieldgate.js');
  return exec[2].split(/\s+/).filter(Boolean);
}

let benchFlags: string[] | undefined;

/**
 * The node flags every bench child runs with: the unit's (this checkout's, read once) and then
 * BENCH_NODE_FLAGS, space-separated, to compare variants.
 */
export function benchNodeFlags(): string[] {
  benchFlags ??= [...serviceNodeFlags(readFileSync(new URL('../../systemd/fieldgate.service', import.meta.url), 'utf8')),
    ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean)];
  return benchFlags;
}

/**
 * VmRSS of a gateway child process with `devices` x 50 points and one link each, started with the
 * unit's node flags (+ BENCH_NODE_FLAGS): the max and last of 1 s samples, and VmHWM, the peak
 * including start-up (parsing the 350 KB site file) that 1 s samples can miss.
 */
export async function measureRss(devices: number, seconds: number): Promise<{ maxMb: number; endMb: number; peakMb: number; reports: number }> {
  const broker = await Mosquitto.start();
  const sim = await simulator(devices);
  const dir = mkdtempSync(join(tmpdir(), 'fg-bench-'));
  try {
    const lines = [
      'gateway:', `  stateDir: ${join(dir, 'state')}`, '  logLevel: warn', '  health: { enabled: false }',
      '  cloud:', `    mqttUrl: ${broker.url}`, '    projectKey: pk', '    syncPeriodMs: 0',
      'buses:', `  - { name: plant, kind: tcp, host: 127.0.0.1, port: ${sim.tcp?.port}, timeoutMs: 1000 }`, 'devices:',
      ...Array.from({ length: devices }, (_, i) => `  - { name: dev-${i + 1}, bus: plant, unitId: ${i + 1}, pollIntervalMs: 1s, cloud: { accessToken: token-${i + 1} }, points: [${Array.from({ length: 50 }, (_, p) => `{ id: p${p}, table: holding, address: ${p}, report: { mode: always } }`).join(', ')}] }`),
    ];
    const site = join(dir, 'site.yaml');
    writeFileSync(site, `${lines.join('\n')}\n`);
    const child = spawn(process.execPath, [...benchNodeFlags(), 'bin/fieldgate.js', 'run', '--config', site], { stdio: ['ignore', 'ignore', 'inherit'] });
    let maxKb = 0;
    let endKb = 0;
    let peakKb = 0;
    for (let t = 0; t < seconds; t += 1) {
      await sleep(1000);
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      maxKb = Math.max(maxKb, kb);
      endKb = kb;
      peakKb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
    }
    child.kill('SIGTERM');
    await new Promise((r) => child.on('exit', r));
    return { maxMb: maxKb / 1024, endMb: endKb / 1024, peakMb: peakKb / 1024, reports: 0 };
  } finally {
    await sim.close();
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(log: (line: string) => void): Promise<void> {
  log('## Northbound');
  log('');
  const t = await measureThroughput(10);
  const nb = await measureNorthboundOnly(10);
  const lat = await measurePushLatency(300);
  const rss = await measureRss(100, 20);
  log('| measure | fieldgate | baseline / target | ratio |');
  log('| --- | --- | --- | --- |');
  log(`| points/s poll -> outbox -> PUBACK (8 devices x 100 points polled every 5 ms over Modbus TCP: the poll rate is the limit here) | ${t.pointsPerS.toFixed(0)} | raw mqtt.js, same payloads, 100 in flight: ${t.rawPointsPerS.toFixed(0)}; target >= 50 % and >= 20,000 | ${((100 * t.pointsPerS) / t.rawPointsPerS).toFixed(1)} % |`);
  log(`| points/s reporter -> outbox -> PUBACK alone (1 link, samples fed as fast as the bounded outbox takes them) | ${nb.pointsPerS.toFixed(0)} | raw mqtt.js, same payloads, 100 in flight: ${nb.rawPointsPerS.toFixed(0)}; target >= 50 % | ${((100 * nb.pointsPerS) / nb.rawPointsPerS).toFixed(1)} % |`);
  log(`| push -> register write latency while the bus is saturated (300 pushes, Modbus TCP) | p50 ${lat.p50.toFixed(2)} ms, p99 ${lat.p99.toFixed(2)} ms, max ${lat.max.toFixed(1)} ms | target p99 <= 20 ms | ${(lat.p99 / 20).toFixed(2)} of the limit |`);
  log(`| RSS, 100 devices x 50 points, 100 links, 20 s (child process, node ${benchNodeFlags().join(' ')} as in the unit) | max ${rss.maxMb.toFixed(1)} MB, end ${rss.endMb.toFixed(1)} MB (1 s samples); start-up peak (VmHWM) ${rss.peakMb.toFixed(1)} MB | target <= 80 MB | ${(rss.maxMb / 80).toFixed(2)} of the limit (peak ${(rss.peakMb / 80).toFixed(2)}) |`);
  log('');
}
