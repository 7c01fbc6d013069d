// Lost frames at the RTU defaults (issue 28), shared by the integration test and `npm run bench --
// hostile`: one device polled by a real Poller and Bus through a socat pty against a raw device
// (trap-peer.ts) that ignores chosen requests (a frame lost to line noise), answering all others
// at once. Samples lost are counted from the gaps between the samples' cycle slots.
import { Bus } from '../../src/field/modbus/bus.js';
import { createModbusTransport } from '../../src/field/modbus/transport.js';
import { Poller, type Sample } from '../../src/device/poller.js';
import type { DevicePollStats } from '../../src/device/poller-types.js';
import type { BusStats } from '../../src/field/modbus/bus-stats.js';
import { BUS_DEFAULTS } from '../../src/core/config/buses.js';
import { compileDevice } from '../../src/core/config/compile.js';
import { silentLogger } from '../../src/ops/log.js';
import { rtuBusConfig } from './bus-configs.js';
import { deviceConfig, pointConfig } from './device-configs.js';
import { startPtyPair } from './socat.js';
import { startTrapPeer, type TrapAnswer, type TrapRequest, truthOf } from './trap-peer.js';
import { waitFor } from './wait.js';
import type { Table } from '../../src/core/points/types.js';
import type { RtuBusConfig } from '../../src/core/config/site-types.js';

/** Answers one request knowing the bus under test ('silent' counts as a lost frame). */
export type LossScript = (request: TrapRequest, index: number, bus: Bus) => TrapAnswer;

export interface LostFrameOptions {
  /**
   * Which requests (0-based, in arrival order) the device ignores, a share of them at random, or
   * a script that answers each request itself.
   */
  lose: { requests: readonly number[] } | { rate: number; seed: number } | { script: LossScript };
  /** The run ends once this many samples arrived (and at least `minLost` frames were lost). */
  samples: number;
  /** Instead of `samples`: the run ends once this holds for the samples so far. */
  done?: (samples: readonly Sample[]) => boolean;
  minLost?: number;
  pollIntervalMs?: number;
  timeoutMs?: number;
  /** Bus settings beside the defaults (timeoutRepeats, lateSeenForgetAfterAnswers ...). */
  bus?: Partial<RtuBusConfig>;
  /** The device's points (default: holding registers 0-3, one read). */
  points?: readonly { table: Table; address: number }[];
}

export interface LostFrameResult {
  lostFrames: number;
  samples: number;
  /** Cycle slots without a sample. */
  samplesLost: number;
  wrongValues: number;
  offlineTransitions: string[];
  /** When each sample was taken (its `ts`). */
  sampleTimes: number[];
  stats: BusStats;
  /** The poller's own counts: failed cycles, and slots skipped because a cycle ran late (load). */
  poll: Pick<DevicePollStats, 'failedCycles' | 'skippedCycles'>;
}

const UNIT = 1;
const POINTS = [0, 1, 2, 3];

/** A small deterministic generator, so a run's losses repeat. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

export async function runLostFrames(options: LostFrameOptions): Promise<LostFrameResult> {
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const cleanups: Array<() => Promise<void>> = [];
  try {
    const pair = await startPtyPair();
    cleanups.push(() => pair.stop());
    const lose = options.lose;
    const random = 'rate' in lose ? seeded(lose.seed) : () => 1;
    let lostFrames = 0;
    let bus: Bus | undefined;
    const peer = await startTrapPeer(pair.b, {
      answer: (request, index) => {
        if ('script' in lose) {
          const answer = bus ? lose.script(request, index, bus) : { afterMs: 0 };
          if (answer === 'silent') lostFrames += 1;
          return answer;
        }
        const lost = 'rate' in lose ? random() < lose.rate : lose.requests.includes(index);
        if (!lost) return { afterMs: 0 };
        lostFrames += 1;
        return 'silent';
      },
    });
    cleanups.push(() => peer.stop());
    bus = new Bus({
      config: rtuBusConfig({
        path: pair.a, timeoutMs: options.timeoutMs ?? BUS_DEFAULTS.rtu.timeoutMs, interFrameDelayMs: 2,
        cooldown: BUS_DEFAULTS.cooldown, reopenAfterSilenceMs: BUS_DEFAULTS.reopenAfterSilenceMs, ...options.bus,
      }),
      transportFactory: createModbusTransport, logger: silentLogger(),
    });
    const started = bus;
    cleanups.push(() => started.stop());
    started.start();
    const samples: Sample[] = [];
    const offlineTransitions: string[] = [];
    let wrongValues = 0;
    const poller = new Poller({
      bus: started,
      devices: [compileDevice(deviceConfig({
        name: 'meter', unitId: UNIT, pollIntervalMs,
        points: (options.points ?? POINTS.map((address) => ({ table: 'holding' as const, address }))).map(({ table, address }) => pointConfig({ id: `r${address}`, table, address })),
      }))],
      sink: {
        onSample: (sample) => {
          for (const [id, value] of Object.entries(sample.values)) if (value !== truthOf(UNIT, Number(id.slice(1)))) wrongValues += 1;
          samples.push(sample);
        },
        onDeviceState: (_device, state, reason) => { if (state === 'offline') offlineTransitions.push(reason); },
      },
      logger: silentLogger(),
    });
    cleanups.push(() => poller.stop());
    poller.start();
    const done = options.done ?? (() => samples.length >= options.samples);
    await waitFor(() => done(samples) && lostFrames >= (options.minLost ?? 1), {
      what: 'samples and lost frames', timeoutMs: (options.samples + 30) * pollIntervalMs * 2,
    });
    let samplesLost = 0;
    for (let i = 1; i < samples.length; i += 1) {
      samplesLost += Math.max(0, Math.round(((samples[i] as Sample).ts - (samples[i - 1] as Sample).ts) / pollIntervalMs) - 1);
    }
    return {
      lostFrames, samples: samples.length, samplesLost, wrongValues, offlineTransitions, sampleTimes: samples.map((s) => s.ts), stats: started.stats(), poll: poller.stats()[0]!,
    };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}
