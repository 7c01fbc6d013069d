// One hostile run, shared by the integration tests and the `hostile` benchmark: a Bus and a Poller
// against a hostile peer with a healthy unit (1) and a hostile unit (2) on the same line. The peer
// misbehaves for `attackMs`, then turns good; the run ends when the hostile unit reports the truth.
import type { BusConfig } from '../../src/core/config/site-types.js';
import { type Logger, silentLogger } from '../../src/ops/log.js';
import { Bus, type BusStats } from '../../src/field/modbus/bus.js';
import { createModbusTransport } from '../../src/field/modbus/transport.js';
import { Poller, type Sample } from '../../src/device/poller.js';
import { rtuBusConfig, tcpBusConfig } from './bus-configs.js';
import { deviceConfig, pointConfig } from './device-configs.js';
import { type HostilePeer, type PeerMode, startHostileRtuPeer, startHostileTcpPeer, truth } from './hostile-modbus.js';
import { startPtyPair } from './socat.js';
import { waitFor } from './wait.js';
import { compileDevice } from '../../src/core/config/compile.js';

export const HEALTHY_UNIT = 1;
export const HOSTILE_UNIT = 2;
const ADDRESSES = [0, 1, 2, 3];

export interface ScenarioOptions {
  transport: 'tcp' | 'rtu';
  mode: PeerMode;
  attackMs: number;
  pollIntervalMs: number;
  timeoutMs: number;
  /** TCP only. */
  maxInFlight?: number;
  /** Cool-down of the bus (fast by default, so tests recover quickly). */
  cooldown?: { afterTimeouts: number; initialMs: number; maxMs: number };
  /** The bus's logger (silent by default). */
  logger?: Logger;
}

export interface ScenarioResult {
  /** Values that are not what the field device holds (must be 0). */
  wrongValues: number;
  /** When the healthy device's samples arrived while the attack ran (Date.now()). */
  healthySampleTimes: number[];
  /** From the peer turning good to the hostile unit's first all-true sample. */
  recoveryMs: number;
  stats: BusStats;
}

function busConfig(options: ScenarioOptions, endpoint: string | number): BusConfig {
  const shared = {
    timeoutMs: options.timeoutMs,
    reconnect: { initialMs: 50, maxMs: 500, jitter: 0 },
    cooldown: options.cooldown ?? { afterTimeouts: 2, initialMs: 300, maxMs: 600 },
    reopenAfterSilenceMs: 1_000,
  };
  return options.transport === 'tcp'
    ? tcpBusConfig({ ...shared, port: Number(endpoint), maxInFlight: options.maxInFlight ?? 1 })
    : rtuBusConfig({ ...shared, path: String(endpoint), interFrameDelayMs: 2 });
}

export async function runHostileScenario(options: ScenarioOptions): Promise<ScenarioResult> {
  const cleanups: Array<() => Promise<void>> = [];
  try {
    const setup = { healthyUnit: HEALTHY_UNIT, hostileUnit: HOSTILE_UNIT, timeoutMs: options.timeoutMs };
    let peer: HostilePeer;
    let endpoint: string | number;
    if (options.transport === 'tcp') {
      peer = await startHostileTcpPeer(setup);
      endpoint = peer.endpoint;
    } else {
      const pair = await startPtyPair();
      cleanups.push(() => pair.stop());
      peer = await startHostileRtuPeer(setup, pair.b);
      endpoint = pair.a;
    }
    cleanups.push(() => peer.stop());
    const bus = new Bus({ config: busConfig(options, endpoint), transportFactory: createModbusTransport, logger: options.logger ?? silentLogger() });
    cleanups.push(() => bus.stop());
    bus.start();

    let wrongValues = 0;
    const samples: Sample[] = [];
    const arrivals: Array<{ device: string; at: number }> = [];
    const points = ADDRESSES.map((address) => pointConfig({ id: `r${address}`, address }));
    const device = (name: string, unitId: number) => deviceConfig({ name, unitId, pollIntervalMs: options.pollIntervalMs, points });
    const poller = new Poller({
      bus,
      devices: [device('healthy', HEALTHY_UNIT), device('hostile', HOSTILE_UNIT)].map(compileDevice),
      sink: {
        onSample: (sample) => {
          const unit = sample.device === 'healthy' ? HEALTHY_UNIT : HOSTILE_UNIT;
          for (const [id, value] of Object.entries(sample.values)) {
            if (value !== truth(unit, Number(id.slice(1)))) wrongValues += 1;
          }
          samples.push(sample);
          arrivals.push({ device: sample.device, at: Date.now() });
        },
        onDeviceState: () => undefined,
      },
      logger: silentLogger(),
    });
    cleanups.push(() => poller.stop());
    poller.start();
    const complete = (s: Sample) => Object.keys(s.values).length === ADDRESSES.length;
    await waitFor(() => samples.some((s) => s.device === 'hostile' && complete(s)), { what: 'both units polled before the attack' });

    peer.mode = options.mode;
    const attackStart = Date.now();
    await new Promise((resolve) => setTimeout(resolve, options.attackMs));
    const healthySampleTimes = arrivals.filter((a) => a.device === 'healthy' && a.at >= attackStart).map((a) => a.at);
    peer.mode = 'good';
    const goodSince = Date.now();
    const recovered = await waitFor(() => samples.find((s) => s.device === 'hostile' && s.ts >= goodSince && complete(s)), {
      what: `recovery after ${options.mode}`, timeoutMs: 20_000,
    });
    return { wrongValues, healthySampleTimes, recoveryMs: recovered.ts - goodSince, stats: bus.stats() };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}
