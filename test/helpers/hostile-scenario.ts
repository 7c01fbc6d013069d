// One hostile run, shared by the integration tests and the `hostile` benchmark: a Bus and a Poller
// against a hostile peer with a healthy unit (1) and a hostile unit (2) on the same line. After an
// optional quiet phase the peer misbehaves for at least `attackMs` and until it has attacked
// `minAttacks` reads and the healthy unit has reported `minHealthySamples` times (waited for with a
// generous deadline, never counted inside a fixed window), then turns good; the run ends when the
// hostile unit reports the truth.
import type { BusConfig } from '../../src/core/config/site-types.js';
import { type Logger, silentLogger } from '../../src/ops/log.js';
import { Bus, type BusStats } from '../../src/field/modbus/bus.js';
import { createModbusTransport } from '../../src/field/modbus/transport.js';
import { Poller, type Sample } from '../../src/device/poller.js';
import { rtuBusConfig, tcpBusConfig } from './bus-configs.js';
import { deviceConfig, pointConfig } from './device-configs.js';
import {
  type HostilePeer, type PeerMode, startHostileRtuOverTcpPeer, startHostileRtuPeer, startHostileTcpPeer, truth,
} from './hostile-modbus.js';
import { startPtyPair } from './socat.js';
import { waitFor } from './wait.js';
import { compileDevice } from '../../src/core/config/compile.js';

export const HEALTHY_UNIT = 1;
export const HOSTILE_UNIT = 2;
const ADDRESSES = [0, 1, 2, 3];

export interface ScenarioOptions {
  transport: 'tcp' | 'rtu' | 'rtu-over-tcp';
  mode: PeerMode;
  /** Shortest attack; it lasts longer until the events below happened. */
  attackMs: number;
  /** Reads of the hostile unit (answered in the attack mode) before it turns good (default 3). */
  minAttacks?: number;
  /** Healthy samples during the attack before it ends (default 3). */
  minHealthySamples?: number;
  /** Healthy samples are also timed for this long before the attack (default 0: no quiet phase). */
  quietMs?: number;
  /** How late the slow modes answer (default timeoutMs + 30). */
  lateMs?: number;
  pollIntervalMs: number;
  timeoutMs: number;
  /** TCP only. */
  maxInFlight?: number;
  /** Cool-down of the bus (fast by default, so tests recover quickly). */
  cooldown?: { afterTimeouts: number; initialMs: number; maxMs: number };
  /** The bus's logger (silent by default). */
  logger?: Logger;
  /** After recovery, the run also waits until this holds of the bus's stats (a late reply still due, say). */
  settled?: (stats: BusStats) => boolean;
}

export interface ScenarioResult {
  /** Values that are not what the field device holds (must be 0). */
  wrongValues: number;
  /** When the healthy device's samples arrived while the attack ran (Date.now()). */
  healthySampleTimes: number[];
  /** The same during the quiet phase before it. */
  quietSampleTimes: number[];
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
    // Its late replies carry marker values, not the registers: the repeat after a timeout (the
    // identical request, issue 41) would take one as the true, older reading a real device sends.
    timeoutRepeats: 0,
  };
  switch (options.transport) {
    case 'tcp': return tcpBusConfig({ ...shared, port: Number(endpoint), maxInFlight: options.maxInFlight ?? 1 });
    case 'rtu': return rtuBusConfig({ ...shared, path: String(endpoint), interFrameDelayMs: 2 });
    case 'rtu-over-tcp': return {
      ...shared, kind: 'rtu-over-tcp', name: 'serial-server', host: '127.0.0.1', port: Number(endpoint), interFrameDelayMs: 2, busyRetries: 3,
    };
  }
}

/** Deadline for the events a phase waits for: generous, the machine may be slow. */
const PHASE_DEADLINE_MS = 60_000;


export async function runHostileScenario(options: ScenarioOptions): Promise<ScenarioResult> {
  const cleanups: Array<() => Promise<void>> = [];
  try {
    const setup = { healthyUnit: HEALTHY_UNIT, hostileUnit: HOSTILE_UNIT, timeoutMs: options.timeoutMs, lateMs: options.lateMs };
    let peer: HostilePeer;
    let endpoint: string | number;
    if (options.transport !== 'rtu') {
      peer = await (options.transport === 'tcp' ? startHostileTcpPeer(setup) : startHostileRtuOverTcpPeer(setup));
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

    const healthyBetween = (from: number, to = Infinity) =>
      arrivals.filter((a) => a.device === 'healthy' && a.at >= from && a.at < to).map((a) => a.at);
    const quietStart = Date.now();
    await new Promise((resolve) => setTimeout(resolve, options.quietMs ?? 0));
    peer.mode = options.mode;
    const attackStart = Date.now();
    const quietSampleTimes = healthyBetween(quietStart, attackStart);
    const readsBefore = peer.hostileReads;
    await waitFor(() => Date.now() - attackStart >= options.attackMs
      && peer.hostileReads - readsBefore >= (options.minAttacks ?? 3)
      && healthyBetween(attackStart).length >= (options.minHealthySamples ?? 3), {
      what: `${options.mode}: attacks and healthy samples`, timeoutMs: options.attackMs + PHASE_DEADLINE_MS,
    });
    const healthySampleTimes = healthyBetween(attackStart);
    peer.mode = 'good';
    const goodSince = Date.now();
    const recovered = await waitFor(() => samples.find((s) => s.device === 'hostile' && s.ts >= goodSince && complete(s)), {
      what: `recovery after ${options.mode}`, timeoutMs: PHASE_DEADLINE_MS,
    });
    const settled = options.settled;
    if (settled) await waitFor(() => settled(bus.stats()), { what: `${options.mode}: settled`, timeoutMs: PHASE_DEADLINE_MS });
    return { wrongValues, healthySampleTimes, quietSampleTimes, recoveryMs: recovered.ts - goodSince, stats: bus.stats() };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}
