// Store-and-forward rig for gateway mode: the emulator (the cloud, with a seed of its own: the
// identity dev-fieldgate and SUBS sub-devices bound to it at their default addresses
// "plant/1".."plant/SUBS"), one simulated counter per unit, the daemon as a child process (real
// CLI, site file, every device in gateway mode) behind a TCP pipe that can cut the channel, and
// the outbox sampler of the direct-mode rig.
// What arrived is read from the emulator: each sub-device's stored history, in arrival order.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type Emulator } from '../../packages/emulator/src/index.js';
import { parseSeed } from '../../packages/emulator/src/state/seed.js';
import { silentLogger } from '../../src/ops/log.js';
import { parseSimMap, startSimulation, type Simulation } from '../../packages/simulator/src/index.js';
import { BrokerPipe, killChildren, OutboxSampler, type GatewayProcess } from './delivery-rig.js';
import { TSX_FROM_SOURCE } from '../helpers/child.js';

const PROJECT_KEY = 'gw-project-key';
export const GATEWAY_ID = 'dev-fieldgate';
export const subId = (unit: number) => `dev-sub-${unit}`;
export const subName = (unit: number) => `sub-${unit}`;

function seedText(subs: number): string {
  const devices = Array.from({ length: subs }, (_, i) => `
  - { id: ${subId(i + 1)}, name: Sub ${i + 1}, type: type-sub, device_key: sub-${i + 1}, access_token: sub-${i + 1}-token, gateway: ${GATEWAY_ID}, sub_device_addr: "plant/${i + 1}" }`).join('');
  return `
project: { id: prj-gw, name: Gateway rig, project_key: ${PROJECT_KEY} }
device_types:
  - { id: type-gateway, name: fieldgate, kind: gateway, conn_protocol: mqtt, conn_type: "3" }
  - { id: type-sub, name: counter, kind: sub_device, conn_protocol: mqtt }
devices:
  - { id: ${GATEWAY_ID}, name: fieldgate, type: type-gateway, device_key: fieldgate-1, access_token: gw-token }${devices}
`;
}

// Each unit counts 100/s at holding 5 (uint32), read every 50 ms: reports increase per device.
function simMap(subs: number): string {
  return `units:\n${Array.from({ length: subs }, (_, i) => `  ${i + 1}:\n    size: { holding: 100 }\n    dynamic:\n      - { table: holding, address: 5, type: uint32, counter: { perSecond: 100 } }\n`).join('')}`;
}

export interface GatewayRigOptions {
  subs: number;
  durableAfterMs?: number;
  /** Serve /healthz and /status on this port (off by default). */
  healthPort?: number;
  keepaliveS?: number;
  /** gateway.health.watchdogSlackMs (only with healthPort). */
  watchdogSlackMs?: number;
  logLevel?: string;
  /** Extra `cloud:` settings, e.g. `{ replayRatePerS: 20, drainMs: 2000 }` (YAML flow entries without braces). */
  cloudExtra?: string;
}

function siteFile(dir: string, emulator: Emulator, pipe: BrokerPipe, simPort: number, options: GatewayRigOptions, units: readonly number[]): string {
  const window = options.durableAfterMs === undefined ? '' : `, durableAfterMs: ${options.durableAfterMs}`;
  const extra = options.cloudExtra ? `\n    ${options.cloudExtra.split(',').map((e) => e.trim()).join('\n    ')}` : '';
  const devices = units.map((unit) => `
  - name: ${subName(unit)}
    bus: plant
    unitId: ${unit}
    pollIntervalMs: 50ms
    cloud: { accessToken: sub-${unit}-token, timestampAttribute: ts }
    points:
      - { id: seq, table: holding, address: 5, type: uint32, report: { mode: always } }`).join('');
  return `
gateway:
  stateDir: ${join(dir, 'state')}
  logLevel: ${options.logLevel ?? 'warn'}
  health: ${options.healthPort === undefined ? '{ enabled: false }' : `{ enabled: true, port: ${options.healthPort}${options.watchdogSlackMs === undefined ? '' : `, watchdogSlackMs: ${options.watchdogSlackMs}`} }`}
  cloud:
    mode: gateway${options.keepaliveS === undefined ? '' : `\n    keepaliveS: ${options.keepaliveS}`}
    identity: { accessToken: gw-token }
    mqttUrl: ${pipe.url}
    apiBaseUrl: http://127.0.0.1:${emulator.httpPort}
    projectKey: ${PROJECT_KEY}
    syncPeriodMs: 0
    reconnect: { initialMs: 100, maxMs: 500, jitter: 0.1 }
    outbox: { maxBytes: 16777216, commitIntervalMs: 20${window} }${extra}
buses:
  - { name: plant, kind: tcp, host: 127.0.0.1, port: ${simPort}, timeoutMs: 500 }
devices:${devices}
`;
}

export class GatewayRig {
  private readonly children: ChildProcess[] = [];

  private constructor(
    readonly emulator: Emulator,
    readonly sim: Simulation,
    readonly pipe: BrokerPipe,
    readonly outbox: OutboxSampler,
    readonly dir: string,
    readonly site: string,
    readonly subs: number,
    private readonly options: GatewayRigOptions,
  ) {}

  /** Rewrites the site file with only these sub-devices (for a reload). */
  writeSite(units: readonly number[]): void {
    writeFileSync(this.site, siteFile(this.dir, this.emulator, this.pipe, this.sim.tcp?.port ?? 0, this.options, units));
  }

  static async start(options: GatewayRigOptions): Promise<GatewayRig> {
    const seed = parseSeed(seedText(options.subs), Date.now());
    const emulator = await startEmulator({ httpPort: 0, mqttPort: 0, tcpPort: 0, host: '127.0.0.1', seed, logger: silentLogger() });
    const map = parseSimMap(simMap(options.subs));
    if (!map.ok) throw new Error(map.problems.join('; '));
    const sim = await startSimulation({ map: map.map, logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 } });
    const pipe = await BrokerPipe.start(emulator.mqttPort);
    const dir = mkdtempSync(join(tmpdir(), 'fg-gw-faults-'));
    const site = join(dir, 'site.yaml');
    writeFileSync(site, siteFile(dir, emulator, pipe, sim.tcp?.port ?? 0, options, Array.from({ length: options.subs }, (_, i) => i + 1)));
    const outbox = new OutboxSampler(join(dir, 'state', 'outbox.sqlite'));
    outbox.start();
    return new GatewayRig(emulator, sim, pipe, outbox, dir, site, options.subs, options);
  }

  get units(): number[] {
    return Array.from({ length: this.subs }, (_, i) => i + 1);
  }

  /** `fieldgate run --config site.yaml` from source, as a daemon would run it. */
  startGateway(logTo?: { out: number; err: number }): GatewayProcess {
    const child = spawn(process.execPath, [...TSX_FROM_SOURCE, 'test/system/fixtures/cli.ts', 'run', '--config', this.site], {
      stdio: ['ignore', logTo?.out ?? 'ignore', logTo?.err ?? 'inherit'], env: { PATH: process.env.PATH },
    });
    this.children.push(child);
    return { child, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
  }

  /** Counter values the cloud stored for a sub-device, in arrival order, redeliveries included. */
  received(unit: number): number[] {
    const history = this.emulator.state.devices.get(subId(unit))?.history ?? [];
    return history.filter((h) => h.name === 'seq' && typeof h.value === 'number').map((h) => h.value as number);
  }

  /**
   * Poll times (the `ts` attribute) of the counter reports the cloud stored for a sub-device, one
   * per report, redeliveries included. A report's attributes are stored one after another, its
   * `ts` last (the reporter appends it after the values), so `ts` closes each report. (Closing a
   * report only when a name came again paired an `online` report's `ts` with the next counter
   * report: when the two shared a millisecond, two reports counted as one.)
   */
  receivedTs(unit: number): number[] {
    return reportTimes(this.emulator.state.devices.get(subId(unit))?.history ?? []);
  }

  /** Values committed to the outbox for a sub-device (by the sampler) that never arrived. */
  missing(unit: number, values: readonly number[] = this.outbox.seenBy.get(subName(unit)) ?? []): number[] {
    const got = new Set(this.received(unit));
    return values.filter((v) => !got.has(v));
  }

  committedBy(unit: number): number[] {
    return [...(this.outbox.seenBy.get(subName(unit)) ?? [])];
  }

  online(unit: number): boolean {
    return this.emulator.state.isOnline(subId(unit));
  }

  async close(): Promise<void> {
    await killChildren(this.children);
    this.outbox.stop();
    await this.pipe.close();
    await this.sim.close();
    await this.emulator.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * The poll times of the counter reports in a device's stored history (attribute by attribute, in
 * arrival order): a report ends at its `ts`, or where a name comes again without one.
 */
export function reportTimes(history: ReadonlyArray<{ name: string; value: unknown }>): number[] {
  const out: number[] = [];
  let report = new Map<string, unknown>();
  const end = () => {
    const ts = report.get('ts');
    if (typeof report.get('seq') === 'number' && typeof ts === 'number') out.push(ts);
    report = new Map();
  };
  for (const h of history) {
    if (report.has(h.name)) end();
    report.set(h.name, h.value);
    if (h.name === 'ts') end();
  }
  end();
  return out;
}
