// End to end with the daemon as its own process (arm64 under qemu, or native for comparison):
// the cloud emulator and two simulated RTU meters on a socat pty run here, natively, as peers.
//   node --import tsx test/arm64/e2e.ts --node NODE --app DIR [--seconds 60]
// Exits 1 with the failed checks listed. Prints the daemon's CPU per 1,000 points polled.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { silentLogger } from '../../src/ops/log.js';
import type { GatewayStatus } from '../../src/ops/status.js';
import { createPtyPair, parseSimMap, startSimulation } from '../../packages/simulator/src/index.js';
import { waitFor } from '../helpers/wait.js';
import { startTestEmulator, type TestEmulator } from '../integration/emulator/helpers.js';
import { startNotifyListener } from './notify.js';
import { cpuSeconds } from './proc-cpu.js';
import {
  COUNTER_PER_SECOND, DEVICE_IDS, METERS, POINTS_PER_CYCLE, REQUESTS_PER_CYCLE, TOKENS, UNIT_IDS,
  expectedStatic, freePort, simMapText, siteYaml, type MeterName,
} from './site.js';

const { values: args } = parseArgs({ options: { node: { type: 'string' }, app: { type: 'string' }, seconds: { type: 'string', default: '60' } } });
if (!args.node || !args.app) throw new Error('usage: e2e.ts --node NODE --app DIR [--seconds N]');
const seconds = Number(args.seconds);
const failures: string[] = [];
const check = (ok: boolean, what: string) => {
  process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${what}\n`);
  if (!ok) failures.push(what);
};
const near = (a: unknown, b: number) => typeof a === 'number' && Math.abs(a - b) < 1e-6;

const emulator: TestEmulator = await startTestEmulator({ realChannel: true });
const map = parseSimMap(simMapText());
if (!map.ok) throw new Error(map.problems.join('; '));
const pty = await createPtyPair();
const sim = await startSimulation({ map: map.map, logger: silentLogger(), rtu: { path: pty.b }, line: { baud: 19200, parity: 'even', dataBits: 8, stopBits: 1 } });
const dir = mkdtempSync(join(tmpdir(), 'fieldgate-arm64-'));
const healthPort = await freePort();
const sitePath = join(dir, 'site.yaml');
writeFileSync(sitePath, siteYaml({ stateDir: join(dir, 'state'), healthPort, mqttPort: emulator.emu.mqttPort, httpPort: emulator.emu.httpPort, serialPath: pty.a }));

// systemd's side of sd_notify (READY, WATCHDOG through koffi's FFI on the daemon's side).
const notify = await startNotifyListener(join(dir, 'notify.sock'));
// The service's V8 flags (systemd/fieldgate.service), so the CPU figure is the service's.
const daemon = spawn(args.node, ['--optimize-for-size', '--v8-pool-size=1', '--single-threaded', join(args.app, 'bin/fieldgate.js'), 'run', '--config', sitePath], {
  cwd: args.app, stdio: ['ignore', 'pipe', 'pipe'],
  env: { ...process.env, FIELDGATE_HEALTH_PORT: String(healthPort), NOTIFY_SOCKET: notify.path, WATCHDOG_USEC: '20000000' },
});
let log = '';
daemon.stdout.on('data', (chunk: Buffer) => { log += chunk.toString(); });
daemon.stderr.on('data', (chunk: Buffer) => { log += chunk.toString(); });
const exited = new Promise<number | null>((resolve) => daemon.once('exit', (code) => resolve(code)));
const pid = daemon.pid ?? 0;

async function attributes(meter: MeterName): Promise<Record<string, unknown>> {
  const reply = await emulator.app('GET', `/app/device/v1/${TOKENS[meter]}/attributes`);
  return (reply.body.attributes ?? {}) as Record<string, unknown>;
}
async function status(): Promise<GatewayStatus> {
  return (await (await fetch(`http://127.0.0.1:${healthPort}/status`)).json()) as GatewayStatus;
}
const readTransactions = async () => (await status()).buses.reduce((sum, b) => sum + b.transactions, 0);

/** Interface A history of one attribute, oldest first. */
async function series(meter: MeterName, identifier: string): Promise<Array<{ ts: number; value: unknown; type: string }>> {
  const points: Array<{ ts: number; value: unknown; type: string }> = [];
  for (let page = 1; ; page += 1) {
    const reply = await emulator.api('GET', `/api/v1/device/${DEVICE_IDS[meter]}/attribute/${identifier}/series?page=${page}&page_records=500`);
    const items = (reply.body.info ?? []) as Array<{ ts: number; value: unknown; type: string }>;
    points.push(...items);
    if (items.length < 500) return points.reverse();
  }
}
/** A value the gateway reported (not the push itself, which interface B also stores) after `since`. */
async function reportedAfter(meter: MeterName, identifier: string, value: number, since: number): Promise<boolean> {
  return (await series(meter, identifier)).some((h) => h.type === 'report' && h.ts >= since && near(h.value, value));
}

const started = Date.now();
try {
  // Start-up under emulation takes seconds; the first values must then arrive with the right values.
  for (const meter of METERS) {
    const expected = expectedStatic(UNIT_IDS[meter]);
    const got = await waitFor(async () => {
      if (daemon.exitCode !== null) throw new Error(`daemon exited with ${daemon.exitCode}`);
      const a = await attributes(meter);
      return Object.entries(expected).every(([k, v]) => near(a[k], v)) ? a : undefined;
    }, { timeoutMs: 120_000, intervalMs: 250, what: `${meter} values in the cloud` });
    check(true, `${meter}: polled values arrived in the cloud (interface B), counter=${String(got.counter)}`);
  }
  const readyS = (Date.now() - started) / 1000;
  const cpu0 = cpuSeconds(pid);
  const tx0 = await readTransactions();
  const t0 = Date.now();

  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  await pause((seconds * 1000) / 3);
  // A push through interface B must reach the register and come back as the read-back value.
  const pushedB = Date.now();
  await emulator.app('POST', `/app/device/v1/${TOKENS['meter-1']}/attributes`, { setpoint: 42.5 });
  await waitFor(() => sim.simulator.getRegister(1, 'holding', 0) === 425, { timeoutMs: 30_000, what: 'setpoint 425 in the device' });
  check(true, 'meter-1: push via interface B written to holding 0 (425)');
  await waitFor(() => reportedAfter('meter-1', 'setpoint', 42.5, pushedB), { timeoutMs: 30_000, intervalMs: 250, what: 'setpoint read-back' });
  check(true, 'meter-1: setpoint 42.5 read back from the device and reported (interface A series)');
  await pause(Math.max(0, t0 + (2 * seconds * 1000) / 3 - Date.now()));
  // A push through interface A (A7) to the other meter.
  const pushedA = Date.now();
  await emulator.api('POST', `/api/v1/control/device/${DEVICE_IDS['meter-2']}/attributes`, { speed: 1234 });
  await waitFor(() => sim.simulator.getRegister(2, 'holding', 1) === 1234, { timeoutMs: 30_000, what: 'speed 1234 in the device' });
  check(true, 'meter-2: push via interface A written to holding 1 (1234)');
  await waitFor(() => reportedAfter('meter-2', 'speed', 1234, pushedA), { timeoutMs: 30_000, intervalMs: 250, what: 'speed read-back' });
  check(true, 'meter-2: speed 1234 read back from the device and reported (interface A series)');
  await pause(Math.max(0, t0 + seconds * 1000 - Date.now()));

  const cpu1 = cpuSeconds(pid);
  const final = await status();
  const windowS = (Date.now() - t0) / 1000;
  const points = ((final.buses.reduce((sum, b) => sum + b.transactions, 0) - tx0) * POINTS_PER_CYCLE) / REQUESTS_PER_CYCLE;
  check(final.devices.every((d) => d.online) && final.links.every((l) => l.state === 'up'), 'every device online and every link up at the end');
  check(final.outbox?.dropped === 0, `outbox dropped nothing (depth ${final.outbox?.depth ?? '?'})`);
  for (const meter of METERS) {
    const history = await series(meter, 'counter');
    const values = history.map((h) => h.value);
    const monotonic = values.every((v, i) => typeof v === 'number' && Number.isInteger(v) && (i === 0 || v >= (values[i - 1] as number)));
    const current = sim.simulator.getRegister(UNIT_IDS[meter], 'input', 2) * 65536 + sim.simulator.getRegister(UNIT_IDS[meter], 'input', 3);
    const last = values.at(-1);
    check(history.length >= seconds * 2 && monotonic, `${meter}: ${history.length} counter values in the cloud (interface A series), integers, never going back`);
    check(typeof last === 'number' && Math.abs(current - last) <= COUNTER_PER_SECOND * 5, `${meter}: last counter in the cloud ${String(last)} within 5 s of the device's`);
  }
  const messages = notify.messages();
  check(messages.some((m) => m.pid === pid && m.message.includes('READY=1')), 'READY=1 sent to NOTIFY_SOCKET by the daemon');
  check(messages.filter((m) => m.pid === pid && m.message.includes('WATCHDOG=1')).length >= Math.floor(seconds / 10) - 1, `watchdog fed (${messages.filter((m) => m.message.includes('WATCHDOG=1')).length} WATCHDOG=1 with WATCHDOG_USEC 20 s)`);
  const errors = log.split('\n').filter((line) => /"level":(50|60)/.test(line));
  check(errors.length === 0, `no error lines in the daemon's log${errors.length > 0 ? `: ${errors.slice(0, 3).join(' | ')}` : ''}`);
  const pointsPerS = points / windowS;
  const cpuWindow = cpu1 - cpu0;
  process.stdout.write(`daemon: ${args.node}\n`);
  process.stdout.write(`start-up to first values: ${readyS.toFixed(1)} s, CPU ${cpu0.toFixed(2)} s\n`);
  process.stdout.write(`steady ${windowS.toFixed(0)} s: ${points.toFixed(0)} points polled (${pointsPerS.toFixed(0)}/s), CPU ${cpuWindow.toFixed(2)} s = ${((1000 * cpuWindow) / points).toFixed(3)} CPU s per 1,000 points (${((100 * cpuWindow) / windowS).toFixed(1)} % of a core), ${final.devices.reduce((sum, d) => sum + d.skippedCycles, 0)} cycles skipped\n`);
} catch (error) {
  check(false, String(error));
} finally {
  daemon.kill('SIGTERM');
  const killer = setTimeout(() => daemon.kill('SIGKILL'), 30_000);
  const code = await exited;
  clearTimeout(killer);
  check(code === 0, `daemon stopped cleanly on SIGTERM (exit ${String(code)})`);
  notify.stop();
  await sim.close();
  await pty.close();
  await emulator.emu.close();
  if (failures.length > 0) writeFileSync(join(tmpdir(), 'fieldgate-arm64-daemon.log'), log);
  rmSync(dir, { recursive: true, force: true });
}
if (failures.length > 0) {
  process.stdout.write(`daemon log, last lines:\n${log.trimEnd().split('\n').slice(-20).join('\n')}\n`);
  process.stdout.write(`arm64 e2e: ${failures.length} check(s) failed; whole daemon log in ${join(tmpdir(), 'fieldgate-arm64-daemon.log')}\n`);
  process.exitCode = 1;
} else process.stdout.write('arm64 e2e: all checks passed\n');
