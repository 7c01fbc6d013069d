// The embedded demo: cloud emulator + simulated devices + the gateway in one process, with a live
// view of the gateway's values next to the cloud's, and push/command round trips on a timer.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliIo } from '../cli/io.js';
import { checkConfig, parseSiteText } from '../ops/site-file.js';
import { formatIssue } from '../core/config/issues.js';
import type { Config } from '../core/config/config.js';
import { subDevicesOf } from '../core/config/gateway-mode.js';
import { APP_WS_PATH, loadSeedFile, startEmulator, watchAppSide, type AppWatch, type Emulator } from '@fieldgate/emulator';
import { startGateway } from '../main.js';
import type { GatewayHandle } from '../ops/gateway-handle.js';
import { createLogger, silentLogger } from '../ops/log.js';
import { createPtyPair, loadSimMapFile, startSimulation, type PtyPair, type Simulation } from '@fieldgate/simulator';
import { renderFrame, type DemoFrame, type RoundTrip } from './view.js';
import { DemoEventLog } from './event-log.js';
import { choosePort, type HealthChoice } from './health-port.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const DEMO_SITE = join(ROOT, 'config/demo.yaml');
/** How long the demo's app-side watcher may take to subscribe before the gateway starts anyway. */
const APP_WATCH_READY_MS = 5000;

export interface DemoOptions {
  io: CliIo;
  /** Print one frame once the cloud shows every device's values, then stop. */
  once: boolean;
  durationS: number | undefined;
  signal: AbortSignal;
  /** Health endpoint port: 0 = any free port; undefined = config/demo.yaml's. */
  healthPort?: number;
}

interface Running {
  emulator: Emulator;
  sims: Simulation[];
  pty: PtyPair | undefined;
  stateDir: string;
  gateway: GatewayHandle | undefined;
  events: DemoEventLog;
  health: HealthChoice;
  appWatch: AppWatch | undefined;
}

function hasSocat(): boolean {
  try {
    execFileSync('socat', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

type Raw = { gateway: { stateDir: string; cloud: Record<string, unknown> }; buses: Array<Record<string, unknown>>; devices: Array<{ name: string; cloud?: { accessToken?: string } }> };

/** The demo site with the real ports, paths and a fresh state directory filled in. */
function demoConfig(run: Running, meterBus: Record<string, unknown>, plcPort: number, io: CliIo): Config | undefined {
  const parsed = parseSiteText(readFileSync(DEMO_SITE, 'utf8'), DEMO_SITE);
  const raw = parsed.raw as Raw;
  raw.gateway.stateDir = run.stateDir;
  raw.gateway.cloud.mqttUrl = `mqtt://127.0.0.1:${run.emulator.mqttPort}`;
  raw.gateway.cloud.apiBaseUrl = `http://127.0.0.1:${run.emulator.httpPort}`;
  raw.buses = raw.buses.map((bus) => (bus.name === 'rs485' ? { name: bus.name, ...meterBus } : bus.name === 'plc-net' ? { ...bus, port: plcPort } : bus));
  const checked = checkConfig(raw, {});
  if (!checked.config) {
    for (const issue of [...parsed.issues, ...checked.issues]) io.stderr.write(`${formatIssue(issue)}\n`);
    return undefined;
  }
  return checked.config;
}

/** The config with the health port chosen (port 0, any free one, is the demo's alone: a site file names its port). */
function withHealth(config: Config, choice: HealthChoice): Config {
  const { health } = config.gateway;
  return { ...config, gateway: { ...config.gateway, health: { ...health, enabled: health.enabled && choice.port !== undefined, port: choice.port ?? health.port } } };
}

async function cloudValues(httpPort: number, token: string, projectKey: string): Promise<Record<string, unknown> | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${httpPort}/app/device/v1/${token}/attributes`, { headers: { 'Project-Key': projectKey }, signal: AbortSignal.timeout(2000) });
    const body = (await res.json()) as { result?: number; attributes?: Record<string, unknown> };
    return body.result === 1 ? body.attributes : undefined;
  } catch {
    return undefined;
  }
}

async function post(httpPort: number, token: string, projectKey: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`http://127.0.0.1:${httpPort}/app/device/v1/${token}${path}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', 'Project-Key': projectKey }, body: JSON.stringify(body), signal: AbortSignal.timeout(8000),
  });
  return (await res.json()) as Record<string, unknown>;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

export async function runDemoSession(options: DemoOptions): Promise<number> {
  const { io, signal } = options;
  const seed = await loadSeedFile(join(ROOT, 'config/emulator-seed.yaml'), Date.now());
  const run: Running = {
    emulator: await startEmulator({
      httpPort: 0, mqttPort: 0, tcpPort: 0, host: '127.0.0.1', seed, logger: silentLogger(),
      appSide: { tcpPort: undefined, wsPort: 0, wssPort: undefined, tls: undefined, maxFrameBytes: 64 * 1024 },
    }),
    sims: [], pty: undefined, stateDir: mkdtempSync(join(tmpdir(), 'fieldgate-demo-')), gateway: undefined,
    events: new DemoEventLog(), health: { port: undefined, note: '' }, appWatch: undefined,
  };
  try {
    const meterMap = await loadSimMapFile(join(ROOT, 'config/sim/demo-meter.yaml'));
    const plcMap = await loadSimMapFile(join(ROOT, 'config/sim/demo-plc.yaml'));
    const plc = await startSimulation({ map: plcMap, logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 } });
    run.sims.push(plc);
    let meterBus: Record<string, unknown>;
    if (hasSocat()) {
      run.pty = await createPtyPair();
      run.sims.push(await startSimulation({ map: meterMap, logger: silentLogger(), rtu: { path: run.pty.b }, line: { baud: 19200, parity: 'even', dataBits: 8, stopBits: 1 } }));
      meterBus = { kind: 'rtu', path: run.pty.a, baudRate: 19200, parity: 'even' };
    } else {
      const meter = await startSimulation({ map: meterMap, logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 } });
      run.sims.push(meter);
      meterBus = { kind: 'tcp', host: '127.0.0.1', port: meter.tcp?.port };
    }
    const site = demoConfig(run, meterBus, plc.tcp?.port ?? 0, io);
    if (!site) return 78;
    run.health = await choosePort(options.healthPort ?? site.gateway.health.port);
    const config = withHealth(site, run.health);
    const logger = createLogger({ level: config.gateway.logLevel, destination: run.events });
    // A dashboard of the demo's own on the app side, connected before the gateway so it sees it come online.
    run.appWatch = watchAppSide(appEndpoint(run.emulator), run.emulator.state.project.view_key, run.emulator.state.project.view_secret);
    // Subscribed before the gateway connects, or the first online messages go by unseen; a watcher that cannot subscribe shows its error in the view instead.
    const subscribed = new AbortController();
    await Promise.race([run.appWatch.ready.finally(() => subscribed.abort()), sleep(APP_WATCH_READY_MS, AbortSignal.any([signal, subscribed.signal]))]);
    run.gateway = await startGateway(config, { logger, env: {} });
    return await liveView(run, config, options);
  } finally {
    await run.gateway?.stop();
    await run.appWatch?.close();
    for (const sim of run.sims) await sim.close();
    await run.pty?.close();
    await run.emulator.close();
    rmSync(run.stateDir, { recursive: true, force: true });
  }
}

async function liveView(run: Running, config: Config, options: DemoOptions): Promise<number> {
  const { io, signal } = options;
  const gateway = run.gateway as GatewayHandle;
  const projectKey = config.gateway.cloud.projectKey ?? '';
  const tokens = new Map(config.site.devices.map((d) => [d.name, d.cloud?.accessToken ?? '']));
  const frame: DemoFrame = {
    status: gateway.status(), gateway: {}, cloud: {}, roundTrips: [],
    viaGateway: subDevicesOf(config.site, config.gateway.cloud).map((s) => s.device.name),
    endpoints: [
      `cloud emulator: http://127.0.0.1:${run.emulator.httpPort} (interfaces A and B), mqtt://127.0.0.1:${run.emulator.mqttPort}`,
      `devices: ${config.site.buses.map((b) => `${b.name} = ${b.kind === 'rtu' ? `${b.path} (RTU ${b.baudRate} baud)` : `${b.host}:${b.port} (${b.kind})`}`).join(', ')}`,
      gateway.healthPort ? `health: http://127.0.0.1:${gateway.healthPort}/status  (try: fieldgate status --port ${gateway.healthPort})` : `health: ${run.health.note || 'not started (see the gateway events below)'}`,
    ],
  };
  const tty = 'isTTY' in io.stdout && io.stdout.isTTY === true;
  const started = performance.now();
  let tick = 0;
  while (!signal.aborted) {
    frame.status = gateway.status();
    frame.events = { latest: run.events.latest(), total: run.events.total };
    if (run.appWatch) frame.appSide = { endpoint: appEndpoint(run.emulator), ...run.appWatch.summary() };
    for (const d of config.site.devices) {
      frame.gateway[d.name] = { ...gatewayValues(gateway, d.name), online: frame.status.devices.find((s) => s.name === d.name)?.online };
      frame.cloud[d.name] = await cloudValues(run.emulator.httpPort, tokens.get(d.name) ?? '', projectKey);
    }
    const complete = config.site.devices.every((d) => {
      const cloud = frame.cloud[d.name];
      return cloud !== undefined && d.points.every((p) => cloud[p.id] !== undefined);
    });
    if (signal.aborted) break; // stopped while reading: the terminal may be gone
    if (options.once && complete) {
      io.stdout.write(renderFrame(frame));
      return 0;
    }
    if (!options.once && (tty || tick % 5 === 0)) io.stdout.write(`${tty ? '\x1b[2J\x1b[H' : ''}${renderFrame(frame)}`);
    if (!options.once && complete && tick % 10 === 5) void roundTrip(run, config, tick, frame.roundTrips, projectKey, tokens);
    if (options.durationS !== undefined && performance.now() - started > options.durationS * 1000) break;
    if (options.once && performance.now() - started > 60_000) {
      io.stderr.write('fieldgate demo: the cloud did not show every value within 60 s\n');
      io.stdout.write(renderFrame(frame));
      return 69;
    }
    tick += 1;
    await sleep(1000, signal);
  }
  return 0;
}

function appEndpoint(emulator: Emulator): string {
  return `ws://127.0.0.1:${emulator.appSide?.ports.ws ?? 0}${APP_WS_PATH}`;
}

function gatewayValues(gateway: GatewayHandle, device: string): Record<string, unknown> {
  return { ...gateway.latestValues(device) };
}

async function roundTrip(run: Running, config: Config, tick: number, log: RoundTrip[], projectKey: string, tokens: Map<string, string>): Promise<void> {
  const t0 = performance.now();
  const at = new Date().toISOString().slice(11, 19);
  try {
    if ((tick / 10) % 2 < 1) {
      const value = 5 + (Math.round(t0 / 1000) % 50);
      const meter = run.sims.at(-1)?.simulator;
      await post(run.emulator.httpPort, tokens.get('meter-1') ?? '', projectKey, '/attributes', { setpoint: value });
      for (let i = 0; i < 100 && meter?.getRegister(1, 'holding', 2) !== value; i += 1) await new Promise((r) => setTimeout(r, 20));
      const holds = meter?.getRegister(1, 'holding', 2);
      log.push({ label: `push setpoint=${value} to meter-1`, at, ok: holds === value, detail: `register holds ${holds}`, latencyMs: Math.round(performance.now() - t0) });
    } else {
      const rpm = 1000 + (Math.round(t0 / 1000) % 10) * 100;
      const reply = await post(run.emulator.httpPort, tokens.get('plc') ?? '', projectKey, '/command/sync/send', { method: 'boost', params: { rpm }, id: tick % 100000 });
      const ok = reply.result === 1;
      log.push({ label: `command boost rpm=${rpm} to plc`, at, ok, detail: `reply ${JSON.stringify((reply.command as { params?: unknown } | undefined)?.params ?? reply.message)}`, latencyMs: Math.round(performance.now() - t0) });
    }
  } catch (err) {
    log.push({ label: 'round trip', at, ok: false, detail: err instanceof Error ? err.message : String(err), latencyMs: Math.round(performance.now() - t0) });
  }
}
