// The site test:package and the start-up measurement run: 10 Modbus TCP devices on the project's
// simulator, each reporting to the project's cloud emulator (a seed with 10 devices), all on loopback.
import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { startEmulator, type Emulator } from '../../packages/emulator/src/index.js';
import { parseSeed } from '../../packages/emulator/src/state/seed.js';
import { parseSimMap, startSimulation, type Simulation } from '../../packages/simulator/src/index.js';
import { silentLogger } from '../../src/ops/log.js';
import { APP, PROJECT_KEY, SEED_PATH, request } from '../integration/emulator/helpers.js';

export const DEVICE_COUNT = 10;
export const UNITS = Array.from({ length: DEVICE_COUNT }, (_, i) => i + 1);
export const deviceName = (unit: number) => `pkg-meter-${unit}`;
export const deviceId = (unit: number) => `dev-pkg-meter-${unit}`;
const token = (unit: number) => `pkg-meter-${unit}-token`;
/** The counter register advances this many steps per second in the simulator. */
export const COUNTER_PER_SECOND = 10;

/** The project's emulator seed plus one cloud device per simulated unit. */
export function seedText(): string {
  const seed = parse(readFileSync(SEED_PATH, 'utf8')) as { devices: Array<Record<string, unknown>> };
  for (const unit of UNITS) {
    seed.devices.push({ id: deviceId(unit), name: `Package meter ${unit}`, type: 'type-modbus-meter', device_key: deviceName(unit), access_token: token(unit) });
  }
  return stringify(seed);
}

export function simMapText(): string {
  const unit = (u: number) => `  ${u}:
    size: { holding: 10, input: 10 }
    holding: { 0: ${100 + u}, 1: ${200 + u} }
    dynamic:
      - { table: input, address: 0, type: uint32, counter: { perSecond: ${COUNTER_PER_SECOND} } }
`;
  return `units:\n${UNITS.map(unit).join('')}`;
}

export interface SitePorts {
  healthPort: number;
  mqttPort: number;
  httpPort: number;
  modbusPort: number;
}

/** The commissioning page (HTTPS with this certificate and key) and a share of the bus, when set. */
export interface SiteExtras {
  webPort: number;
  cert: string;
  key: string;
  sharePort: number;
}

/**
 * The site file; device 1 fetches its credential by device key (kept in credentials.json), the
 * others have theirs in the file. Without stateDir the daemon takes FIELDGATE_STATE_DIR (the unit sets it).
 * With extras, the page, the bus's share and fieldgate's own identity (the cloud's site commands) too. */
export function siteYaml(ports: SitePorts, stateDir?: string, extras?: SiteExtras): string {
  const devices = UNITS.map((u) => `  - name: ${deviceName(u)}
    bus: plant
    unitId: ${u}
    pollIntervalMs: 200ms
    cloud: ${u === 1 ? `{ deviceKey: ${deviceName(u)} }` : `{ accessToken: ${token(u)} }`}
    points:
      - { id: setpoint, table: holding, address: 0, type: uint16 }
      - { id: limit, table: holding, address: 1, type: uint16 }
      - { id: counter, table: input, address: 0, type: uint32, report: { mode: always } }
`).join('');
  return `# test:package site (edited by the test, as an operator edits the example)
gateway:
${stateDir === undefined ? '' : `  stateDir: ${stateDir}\n`}  logLevel: info
  health: { enabled: true, port: ${ports.healthPort} }
${extras ? `  web: { port: ${extras.webPort}, cert: ${extras.cert}, key: ${extras.key}, allowReload: true }\n` : ''}  cloud:
    mqttUrl: mqtt://127.0.0.1:${ports.mqttPort}
    apiBaseUrl: http://127.0.0.1:${ports.httpPort}
    projectKey: ${PROJECT_KEY}
${extras ? '    identity: { accessToken: demo-gateway-token }\n' : ''}    reconnect: { initialMs: 200ms, maxMs: 1s, jitter: 0.1 }
buses:
  - { name: plant, kind: tcp, host: 127.0.0.1, port: ${ports.modbusPort}, timeoutMs: 1000${extras ? `, share: { port: ${extras.sharePort} }` : ''} }
devices:
${devices}`;
}

/** The emulator on the given ports (0: ephemeral), with a real MQTT channel. */
export async function startCloud(httpPort: number, mqttPort: number): Promise<Emulator> {
  return startEmulator({
    httpPort, mqttPort, tcpPort: 0, seed: parseSeed(seedText(), Date.now()), logger: silentLogger(),
    rateLimit: { limit: 100_000, windowS: 60 },
  });
}

export async function startDevices(): Promise<Simulation> {
  const map = parseSimMap(simMapText());
  if (!map.ok) throw new Error(map.problems.join('; '));
  return startSimulation({ map: map.map, logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 } });
}

/** Interface A history of `counter` for one device, oldest first (values the gateway reported). */
export async function counterSeries(emu: Emulator, unit: number): Promise<Array<{ ts: number; value: number }>> {
  const base = `http://127.0.0.1:${emu.httpPort}`;
  const auth = (await request(base, 'POST', '/api/v1/access_token', APP, {})).body.info.access_token as string;
  const points: Array<{ ts: number; value: number; type: string }> = [];
  for (let page = 1; ; page += 1) {
    const reply = await request(base, 'GET', `/api/v1/device/${deviceId(unit)}/attribute/counter/series?page=${page}&page_records=500`, undefined, { Authorization: `Bearer ${auth}` });
    const items = (reply.body.info ?? []) as Array<{ ts: number; value: number; type: string }>;
    points.push(...items);
    if (items.length < 500) break;
  }
  return points.filter((p) => p.type === 'report').reverse();
}
