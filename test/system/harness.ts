// A whole site on loopback: the cloud emulator, simulated Modbus devices and a gateway config.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandConfig } from '../../src/core/config/command-types.js';
import type { Config } from '../../src/core/config/config.js';
import type { DeviceConfig, PointConfig } from '../../src/core/config/site-types.js';
import { compiledConfig } from '../../src/ops/site-file.js';
import type { AppSideOptions } from '../../packages/emulator/src/appside/index.js';
import { startEmulator, type Emulator } from '../../packages/emulator/src/index.js';
import { parseSeed } from '../../packages/emulator/src/state/seed.js';
import { silentLogger } from '../../src/ops/log.js';
import { parseSimMap, startSimulation, type Simulation } from '../../packages/simulator/src/index.js';

export const PROJECT_KEY = 'demo-project-key';

export const SIM_MAP = `
units:
  1:
    size: { coil: 100, discrete: 100, holding: 200, input: 200 }
    holding:
      - { address: 0, value: 215 }
      - { address: 1, value: 1450 }
    input:
      - { address: 0, value: 2301 }
    coil:
      - { start: 0, values: [false] }
  2:
    size: { coil: 100, discrete: 100, holding: 200, input: 200 }
    holding:
      - { address: 0, value: 100 }
`;

function point(p: Partial<PointConfig> & Pick<PointConfig, 'id' | 'address'>): PointConfig {
  return {
    table: 'holding', type: 'uint16', bit: 0, length: 1, wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0,
    writable: false, report: { mode: 'change', deadband: 0, deadbandKind: 'absolute', maxSilenceMs: 0 }, ...p,
  };
}

export const COMMANDS: CommandConfig[] = [
  { method: 'set_speed', requiredParams: ['rpm'], steps: [{ kind: 'write', point: 'speed', param: 'rpm' }, { kind: 'read', points: ['speed', 'voltage'] }] },
];

export function meterDevice(name: string, unitId: number, token: string, pollIntervalMs = 200): DeviceConfig {
  return {
    name, bus: 'plant', unitId, pollIntervalMs,
    limits: { maxRegistersPerRead: 125, maxBitsPerRead: 2000, maxGap: 8, forceMultiWrite: false },
    points: [
      point({ id: 'setpoint', address: 0, type: 'int16', scale: 0.1, writable: true, min: 0, max: 100 }),
      point({ id: 'speed', address: 1, writable: true, max: 3000 }),
      point({ id: 'voltage', table: 'input', address: 0, scale: 0.1 }),
      point({ id: 'pump', table: 'coil', address: 0, type: 'bool', writable: true }),
    ],
    cloud: { accessToken: token, projectKey: PROJECT_KEY, allowCreate: false },
    commands: COMMANDS,
    streams: [],
  };
}

export interface Site {
  emulator: Emulator;
  sim: Simulation;
  stateDir: string;
  config(devices: DeviceConfig[], overrides?: Partial<Config['gateway']['cloud']>): Config;
  close(): Promise<void>;
}

/** `appSide`: also serve the app-side subscription (off by default); `onForward`: sees each message the broker writes to a device. */
export async function startSite(options: { appSide?: AppSideOptions; onForward?: (deviceId: string, topic: string, payload: Buffer) => void; jsonMaxBytes?: number } = {}): Promise<Site> {
  const seed = parseSeed(readFileSync('config/emulator-seed.yaml', 'utf8'), Date.now());
  const emulator = await startEmulator({
    httpPort: 0, mqttPort: 0, tcpPort: 0, host: '127.0.0.1', seed, logger: silentLogger(), appSide: options.appSide,
    ...(options.onForward ? { onForward: options.onForward } : {}), ...(options.jsonMaxBytes ? { jsonLimits: { maxBytes: options.jsonMaxBytes } } : {}),
  });
  const map = parseSimMap(SIM_MAP);
  if (!map.ok) throw new Error(map.problems.join('; '));
  const sim = await startSimulation({ map: map.map, logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 } });
  const stateDir = mkdtempSync(join(tmpdir(), 'fg-system-'));
  return {
    emulator, sim, stateDir,
    config(devices, overrides = {}) {
      return compiledConfig({
          stateDir, logLevel: 'silent', health: { enabled: true, host: '127.0.0.1', port: 0 },
          cloud: {
            mqttUrl: `mqtt://127.0.0.1:${emulator.mqttPort}`, apiBaseUrl: `http://127.0.0.1:${emulator.httpPort}`, projectKey: PROJECT_KEY,
            keepaliveS: 60, connectTimeoutMs: 10_000, httpTimeoutMs: 10_000, syncPeriodMs: 0, publishWindow: 50, replayRatePerS: 1000,
            reconnect: { initialMs: 100, maxMs: 1000, jitter: 0.1 },
            outbox: { maxBytes: 16 * 1024 * 1024, commitIntervalMs: 20 },
            rateQueue: { ratePerS: 50, concurrency: 2, maxPending: 100, retries: 2 },
            maxInboundBytes: 64 * 1024, drainMs: 2000, inbound: { maxKeys: 1000, maxPending: 64, busShare: 0.5 },
            ...overrides,
          },
        }, {
          buses: [{
            kind: 'tcp', name: 'plant', host: '127.0.0.1', port: sim.tcp?.port ?? 0, timeoutMs: 500, maxInFlight: 1,
            reconnect: { initialMs: 100, maxMs: 1000, jitter: 0.1 }, cooldown: { afterTimeouts: 3, initialMs: 1000, maxMs: 5000 }, busyRetries: 2,
          }],
          devices,
        });
    },
    async close() {
      await sim.close();
      await emulator.close();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/** Interface B call with the Project-Key header. */
export async function deviceApi(site: Site, token: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`http://127.0.0.1:${site.emulator.httpPort}/app/device/v1/${token}${path}`, {
    method, headers: { 'Content-Type': 'application/json', 'Project-Key': PROJECT_KEY },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await res.json()) as Record<string, unknown>;
}

export async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
