// Reload rig: the emulator (the cloud: fieldgate's identity, sub-devices bound to it and devices
// with links of their own), two simulated Modbus TCP buses of counting units, and the daemon as a
// child process (real CLI, site file rewritten by the test, SIGHUP, NOTIFY_SOCKET listened to by an
// independent peer). What arrived is read from the emulator's stored history; connects are
// counted where the cloud registers them.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type Emulator } from '../../packages/emulator/src/index.js';
import { parseSeed } from '../../packages/emulator/src/state/seed.js';
import { parseSimMap, startSimulation, type Simulation, type Simulator } from '../../packages/simulator/src/index.js';
import { silentLogger } from '../../src/ops/log.js';
import type { GatewayStatus } from '../../src/ops/status.js';
import { TSX_FROM_SOURCE } from '../helpers/child.js';
import { pythonListener, type Datagram } from '../helpers/notify-listener.js';
import { serviceNodeFlags } from '../bench/northbound.js';
import { killChildren } from './delivery-rig.js';
import { freePort } from '../helpers/mosquitto.js';

export const BUSES = ['a', 'b'] as const;
export const IDENTITY_ID = 'dev-fieldgate';

/** One field device of the rig: odd units reach the cloud through the identity (gateway mode), even ones on their own link. */
export interface RigDevice {
  bus: (typeof BUSES)[number];
  unit: number;
  periodMs: number;
  /** Extra point (a change of definition) when set. */
  extraPoint?: boolean;
}

export const deviceName = (d: Pick<RigDevice, 'bus' | 'unit'>) => `d-${d.bus}-${d.unit}`;
export const cloudId = (d: Pick<RigDevice, 'bus' | 'unit'>) => `dev-${d.bus}-${d.unit}`;
export const inGatewayMode = (d: Pick<RigDevice, 'unit'>) => d.unit % 2 === 1;

function seedText(units: number): string {
  const devices = BUSES.flatMap((bus) => Array.from({ length: units }, (_, i) => {
    const d = { bus, unit: i + 1 };
    const binding = inGatewayMode(d) ? `, gateway: ${IDENTITY_ID}, sub_device_addr: "${bus}-${d.unit}"` : '';
    return `\n  - { id: ${cloudId(d)}, name: ${deviceName(d)}, type: ${inGatewayMode(d) ? 'type-sub' : 'type-meter'}, device_key: key-${bus}-${d.unit}, access_token: tok-${bus}-${d.unit}${binding} }`;
  })).join('');
  return `
project: { id: prj-reload, name: Reload rig, project_key: pk-reload }
device_types:
  - { id: type-gateway, name: fieldgate, kind: gateway, conn_protocol: mqtt, conn_type: "3" }
  - { id: type-sub, name: counter, kind: sub_device, conn_protocol: mqtt }
  - { id: type-meter, name: meter, kind: direct, conn_protocol: mqtt }
devices:
  - { id: ${IDENTITY_ID}, name: fieldgate, type: type-gateway, device_key: fieldgate-1, access_token: gw-token }${devices}
`;
}

// Every unit counts 100/s at holding 5 (uint32): each report carries a new value.
function simMap(units: number): string {
  return `units:\n${Array.from({ length: units }, (_, i) => `  ${i + 1}:\n    size: { holding: 100 }\n    dynamic:\n      - { table: holding, address: 5, type: uint32, counter: { perSecond: 100 } }\n`).join('')}`;
}

export interface SiteOptions {
  devices: readonly RigDevice[];
  /** Replaces the state directory (a key that cannot change live). */
  stateDir?: string;
  /** Appended as is: breaks the file on purpose. */
  garbage?: string;
  /** Reply timeout of bus b (a change of that bus's definition). */
  busBTimeoutMs?: number;
  /** Reply timeout of bus a (a change restarts the bus, its pollers and its share). */
  busATimeoutMs?: number;
  /** Bus a's `share:` block (a YAML flow mapping); no share without it. */
  shareA?: string;
  /** `gateway.web` (a YAML flow mapping); the page is off without it. */
  web?: string;
  /** `gateway.cloud.identity.commands` (a YAML flow mapping): the page's read limits too. */
  identityCommands?: string;
}

export interface Report {
  seq: number;
  ts: number;
}

export class ReloadRig {
  private child: ChildProcess | undefined;
  private readonly connects = new Map<string, number>();
  datagrams: Datagram[] = [];
  output = '';

  private constructor(
    readonly emulator: Emulator,
    private readonly sims: Simulation[],
    private readonly notifyChild: ChildProcess,
    readonly dir: string,
    readonly healthPort: number,
  ) {
    // Every connect the cloud registers (own links and sub-devices announced by the identity).
    const state = emulator.state;
    const markConnected = state.markConnected.bind(state);
    state.markConnected = (deviceId, via) => {
      this.connects.set(deviceId, (this.connects.get(deviceId) ?? 0) + 1);
      return markConnected(deviceId, via);
    };
  }

  static async start(units: number): Promise<ReloadRig> {
    const seed = parseSeed(seedText(units), Date.now());
    const emulator = await startEmulator({ httpPort: 0, mqttPort: 0, tcpPort: 0, host: '127.0.0.1', seed, logger: silentLogger() });
    const map = parseSimMap(simMap(units));
    if (!map.ok) throw new Error(map.problems.join('; '));
    const sims = await Promise.all(BUSES.map(() => startSimulation({ map: map.map, logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 } })));
    const dir = mkdtempSync(join(tmpdir(), 'fg-reload-'));
    const notify = await pythonListener(join(dir, 'notify.sock'));
    const rig = new ReloadRig(emulator, sims, notify.child, dir, await freePort());
    rig.datagrams = notify.datagrams;
    return rig;
  }

  /** The simulator behind a bus (faults, registers, counters). */
  simulator(bus: (typeof BUSES)[number]): Simulator {
    return this.sims[BUSES.indexOf(bus)].simulator;
  }

  get sitePath(): string {
    return join(this.dir, 'site.yaml');
  }

  writeSite(options: SiteOptions): void {
    const devices = options.devices.map((d) => {
      const cloud = inGatewayMode(d)
        ? `{ mode: gateway, subDeviceAddress: "${d.bus}-${d.unit}", accessToken: tok-${d.bus}-${d.unit}, timestampAttribute: ts }`
        : `{ accessToken: tok-${d.bus}-${d.unit}, timestampAttribute: ts }`;
      const extra = d.extraPoint ? '\n      - { id: raw, table: holding, address: 7, type: uint16, report: { mode: always } }' : '';
      return `
  - name: ${deviceName(d)}
    bus: ${d.bus}
    unitId: ${d.unit}
    pollIntervalMs: ${d.periodMs}
    cloud: ${cloud}
    points:
      - { id: seq, table: holding, address: 5, type: uint32, report: { mode: always } }${extra}`;
    }).join('');
    const timeout = (bus: string) => (bus === 'b' ? options.busBTimeoutMs ?? 1000 : options.busATimeoutMs ?? 1000);
    const share = (bus: string) => (bus === 'a' && options.shareA ? `, share: ${options.shareA}` : '');
    const buses = BUSES.map((bus, i) => `\n  - { name: ${bus}, kind: tcp, host: 127.0.0.1, port: ${this.sims[i].tcp?.port ?? 0}, timeoutMs: ${timeout(bus)}${share(bus)} }`).join('');
    const commands = options.identityCommands ? `, commands: ${options.identityCommands}` : '';
    // Written whole, then renamed into place: a reload never reads a file half written.
    const temporary = `${this.sitePath}.tmp`;
    writeFileSync(temporary, `
gateway:
  stateDir: ${options.stateDir ?? join(this.dir, 'state')}
  logLevel: info
  health: { enabled: true, port: ${this.healthPort} }${options.web ? `\n  web: ${options.web}` : ''}
  cloud:
    identity: { accessToken: gw-token${commands} }
    mqttUrl: mqtt://127.0.0.1:${this.emulator.mqttPort}
    apiBaseUrl: http://127.0.0.1:${this.emulator.httpPort}
    projectKey: pk-reload
    syncPeriodMs: 0
    drainMs: 5000
    reconnect: { initialMs: 100, maxMs: 1000, jitter: 0.1 }
    outbox: { maxBytes: 33554432, commitIntervalMs: 20 }
buses:${buses}
devices:${devices}
${options.garbage ?? ''}`);
    renameSync(temporary, this.sitePath);
  }

  /** `fieldgate run` from source, as the service runs it (its node flags, NOTIFY_SOCKET set). */
  startGateway(): ChildProcess {
    const child = spawn(process.execPath, [...serviceNodeFlags(), ...TSX_FROM_SOURCE, 'test/system/fixtures/cli.ts', 'run', '--config', this.sitePath], {
      stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, NOTIFY_SOCKET: join(this.dir, 'notify.sock') },
    });
    child.stdout?.on('data', (chunk: Buffer) => { this.output += chunk.toString('utf8'); });
    child.stderr?.on('data', (chunk: Buffer) => { this.output += chunk.toString('utf8'); });
    this.child = child;
    return child;
  }

  /** False once the daemon has exited (a test waiting for it fails at once, with its output). */
  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  async status(): Promise<GatewayStatus> {
    const res = await fetch(`http://127.0.0.1:${this.healthPort}/status`, { signal: AbortSignal.timeout(10_000) });
    return (await res.json()) as GatewayStatus;
  }

  async metrics(): Promise<string> {
    const res = await fetch(`http://127.0.0.1:${this.healthPort}/metrics`, { signal: AbortSignal.timeout(10_000) });
    return res.text();
  }

  /** Reports the cloud stored for a device, in arrival order (redeliveries included). */
  reports(d: Pick<RigDevice, 'bus' | 'unit'>): Report[] {
    const history = this.emulator.state.devices.get(cloudId(d))?.history ?? [];
    const reports: Report[] = [];
    // A report stores `seq` then `ts` under one arrival time; a `ts` of another report (`online`) is not a poll.
    history.forEach((h, i) => {
      const next = history[i + 1];
      if (h.name === 'seq' && typeof h.value === 'number' && next?.name === 'ts' && next.ts === h.ts && typeof next.value === 'number') {
        reports.push({ seq: h.value, ts: next.value });
      }
    });
    return reports;
  }

  /** What the cloud stored for a device around an arrival time (for failure messages). */
  historyAround(d: Pick<RigDevice, 'bus' | 'unit'>, pollTs: number): string {
    const history = this.emulator.state.devices.get(cloudId(d))?.history ?? [];
    const at = history.findIndex((h) => h.name === 'ts' && h.value === pollTs);
    return JSON.stringify(history.slice(Math.max(0, at - 8), at + 8));
  }

  connectsOf(d: Pick<RigDevice, 'bus' | 'unit'>): number {
    return this.connects.get(cloudId(d)) ?? 0;
  }

  identityConnects(): number {
    return this.connects.get(IDENTITY_ID) ?? 0;
  }

  /** Resident memory (kB) and open descriptors of the daemon, from /proc. */
  processFigures(): { rssKb: number; fds: number } {
    const pid = this.child?.pid;
    if (pid === undefined) throw new Error('no gateway running');
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rssKb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1]);
    const fds = readdirSync(`/proc/${pid}/fd`).length;
    return { rssKb, fds };
  }

  /** SIGTERM, and the exit code once the daemon has exited. */
  async stop(): Promise<number | null> {
    const child = this.child;
    if (!child) throw new Error('no gateway running');
    if (!this.running) return child.exitCode;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    return exited;
  }

  get pid(): number {
    const pid = this.child?.pid;
    if (pid === undefined) throw new Error('no gateway running');
    return pid;
  }

  async close(): Promise<void> {
    await killChildren([...(this.child ? [this.child] : []), this.notifyChild]);
    await Promise.all(this.sims.map((s) => s.close()));
    await this.emulator.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
