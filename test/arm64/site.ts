// The end-to-end site of the arm64 run: two simulated RTU meters and the site file the daemon runs.
import { createServer } from 'node:net';

export const TOKENS = { 'meter-1': 'demo-meter-1-token', 'meter-2': 'demo-meter-2-token' } as const;
export const DEVICE_IDS = { 'meter-1': 'dev-meter-1', 'meter-2': 'dev-meter-2' } as const;
export type MeterName = keyof typeof TOKENS;
export const METERS: MeterName[] = ['meter-1', 'meter-2'];
export const UNIT_IDS: Record<MeterName, number> = { 'meter-1': 1, 'meter-2': 2 };

export const POLL_INTERVAL_MS = 100;
/** The counter register advances this many steps per second in the simulator. */
export const COUNTER_PER_SECOND = 5;
/** Points per device and read requests per poll cycle (holding 0..7 and input 0..3). */
export const POINTS_PER_CYCLE = 10;
export const REQUESTS_PER_CYCLE = 2;

/** What interface B must show for each meter once polled (before any push). */
export function expectedStatic(unit: number): Record<string, number> {
  const values: Record<string, number> = { setpoint: 21.5, speed: 1450, voltage: 230.1 + unit };
  for (let r = 2; r <= 7; r += 1) values[`r${r}`] = 100 * unit + r;
  return values;
}

export function simMapText(): string {
  const unit = (u: number) => `  ${u}:
    size: { holding: 100, input: 100 }
    holding: { 0: 215, 1: 1450, ${[2, 3, 4, 5, 6, 7].map((r) => `${r}: ${100 * u + r}`).join(', ')} }
    input: { 0: ${2301 + 10 * u} }
    dynamic:
      - { table: input, address: 2, type: uint32, counter: { perSecond: ${COUNTER_PER_SECOND} } }
`;
  return `units:\n${unit(1)}${unit(2)}`;
}

function device(name: MeterName): string {
  const registers = [2, 3, 4, 5, 6, 7].map((r) => `      - { id: r${r}, table: holding, address: ${r}, type: uint16, report: { mode: always } }`);
  return `  - name: ${name}
    bus: rs485
    unitId: ${UNIT_IDS[name]}
    pollIntervalMs: ${POLL_INTERVAL_MS}ms
    cloud: { accessToken: ${TOKENS[name]} }
    points:
      - { id: setpoint, table: holding, address: 0, type: int16, scale: 0.1, writable: true, min: 0, max: 100, report: { mode: always } }
      - { id: speed, table: holding, address: 1, type: uint16, writable: true, max: 3000, report: { mode: always } }
${registers.join('\n')}
      - { id: voltage, table: input, address: 0, type: uint16, scale: 0.1, report: { mode: always } }
      - { id: counter, table: input, address: 2, type: uint32, report: { mode: always } }
`;
}

export interface SiteOptions {
  stateDir: string;
  healthPort: number;
  mqttPort: number;
  httpPort: number;
  serialPath: string;
}

export function siteYaml(o: SiteOptions): string {
  return `gateway:
  stateDir: ${o.stateDir}
  logLevel: info
  health: { enabled: true, port: ${o.healthPort} }
  cloud:
    mqttUrl: mqtt://127.0.0.1:${o.mqttPort}
    apiBaseUrl: http://127.0.0.1:${o.httpPort}
    projectKey: demo-project-key
buses:
  - name: rs485
    kind: rtu
    path: ${o.serialPath}
    baudRate: 19200
    parity: even
devices:
${METERS.map(device).join('')}`;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
