// A meter that answers reads of up to 4 registers and stays silent on longer ones (issue 28), on
// an RTU line (socat pty), an RTU-over-TCP serial server and Modbus TCP, against an independent
// raw peer: the poller learns "4" within 10 cycles on each (halves refused by the late-reply guard
// or the cool-down are no evidence of silence), the lesson shows in the poller's status, every
// value is the meter's, and the healthy unit beside it keeps reporting. RTU also at its default
// timeout (1000 ms, so a 10 s late-reply guard): while the guard holds the whole read's length,
// the confirming read goes one register shorter (still longer than a half), so the lesson does
// not wait for the guard to run out. A meter that serves 7 of an 8-register read answers that
// one-shorter read, so its lesson waits for the guard (the cases below say how long).
import { afterEach, describe, expect, it } from 'vitest';
import type { BusConfig } from '../../../src/core/config/site-types.js';
import { compileDevice } from '../../../src/core/config/compile.js';
import { Bus } from '../../../src/field/modbus/bus.js';
import { createModbusTransport } from '../../../src/field/modbus/transport.js';
import { Poller, type Sample } from '../../../src/device/poller.js';
import { silentLogger } from '../../../src/ops/log.js';
import { rtuBusConfig, tcpBusConfig } from '../../helpers/bus-configs.js';
import { deviceConfig, pointConfig } from '../../helpers/device-configs.js';
import {
  type HostilePeer, LONG_READS_SILENT, LONGEST_ANSWERED_READ, startHostileRtuOverTcpPeer, startHostileRtuPeer,
  startHostileTcpPeer, truth,
} from '../../helpers/hostile-modbus.js';
import { startPtyPair } from '../../helpers/socat.js';
import { waitFor } from '../../helpers/wait.js';

const HEALTHY = 1;
const METER = 2;
/** Short, so the test is quick; RTU is also run at its site-file default. */
const SHORT_TIMEOUT_MS = 300;
const RTU_DEFAULT_TIMEOUT_MS = 1000;
/** The cool-down defaults of a site file. */
const COOLDOWN = { afterTimeouts: 3, initialMs: 5_000, maxMs: 60_000 };

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Transport = 'rtu' | 'rtu-over-tcp' | 'tcp';

/** `setup.longestAnsweredRead` may be changed while the peer runs (a meter power-cycled with another limit). */
async function meterPeer(transport: Transport, timeoutMs: number, longestAnsweredRead: number): Promise<{ peer: HostilePeer; config: BusConfig; setup: { longestAnsweredRead: number } }> {
  const setup = { healthyUnit: HEALTHY, hostileUnit: METER, timeoutMs, longestAnsweredRead };
  const shared = { timeoutMs, cooldown: COOLDOWN };
  if (transport === 'rtu') {
    const pair = await startPtyPair();
    cleanups.push(() => pair.stop());
    const peer = await startHostileRtuPeer(setup, pair.b);
    return { peer, config: rtuBusConfig({ ...shared, path: pair.a, interFrameDelayMs: 2 }), setup };
  }
  const peer = await (transport === 'tcp' ? startHostileTcpPeer(setup) : startHostileRtuOverTcpPeer(setup));
  const port = Number(peer.endpoint);
  const config: BusConfig = transport === 'tcp'
    ? tcpBusConfig({ ...shared, port })
    : { ...rtuBusConfig(shared), kind: 'rtu-over-tcp', name: 'serial-server', host: '127.0.0.1', port, interFrameDelayMs: 2, echo: false };
  return { peer, config, setup };
}

/** The late-reply guard at a timeout of `timeoutMs` (10 timeouts) over the 1 s poll period, in cycles. */
const guardCycles = (timeoutMs: number) => Math.ceil((10 * timeoutMs) / 1000);

/**
 * transport, timeout, the longest read the meter answers, the limit learned, the most cycles the
 * lesson may take. A meter serving 7 of an 8-register read answers the one-shorter confirming read
 * (RTU framing, while the late-reply guard holds the whole's length): only the whole, once the
 * guard of the first timeout lets it go, tells it from a lost frame, so it is learned at the first
 * cycle after that guard (seen: cycle 5 at the 300 ms timeout, 11 at the 1000 ms default with its
 * 10 s guard; bounds 10 and the guard's cycles + 3), as 7 (the longest read served). On TCP, with no guard, the whole is confirmed at once and the limit
 * halves to 4 (no 7-register read was served).
 */
const CASES: Array<[Transport, number, number, number, number]> = [
  ['rtu', SHORT_TIMEOUT_MS, LONGEST_ANSWERED_READ, LONGEST_ANSWERED_READ, 10],
  ['rtu-over-tcp', SHORT_TIMEOUT_MS, LONGEST_ANSWERED_READ, LONGEST_ANSWERED_READ, 10],
  ['tcp', SHORT_TIMEOUT_MS, LONGEST_ANSWERED_READ, LONGEST_ANSWERED_READ, 10],
  ['rtu', RTU_DEFAULT_TIMEOUT_MS, LONGEST_ANSWERED_READ, LONGEST_ANSWERED_READ, 10],
  ['rtu', SHORT_TIMEOUT_MS, 7, 7, 10], ['rtu-over-tcp', SHORT_TIMEOUT_MS, 7, 7, 10], ['tcp', SHORT_TIMEOUT_MS, 7, 4, 10],
  ['rtu', RTU_DEFAULT_TIMEOUT_MS, 7, 7, guardCycles(RTU_DEFAULT_TIMEOUT_MS) + 3],
];

const POINTS = [0, 1, 2, 3, 4, 5, 6, 7].map((address) => pointConfig({ id: `r${address}`, address }));

/** The meter (8 registers, one read) and a healthy unit beside it, polled every second by a real Poller and Bus. */
async function startMeter(transport: Transport, timeoutMs: number, longest: number, points = POINTS) {
  const { peer, config, setup } = await meterPeer(transport, timeoutMs, longest);
  peer.mode = LONG_READS_SILENT;
  cleanups.push(() => peer.stop());
  const bus = new Bus({ config, transportFactory: createModbusTransport, logger: silentLogger() });
  cleanups.push(() => bus.stop());
  bus.start();
  const samples: Sample[] = [];
  const states: string[] = [];
  let wrongValues = 0;
  const poller = new Poller({
    bus,
    devices: [
      deviceConfig({ name: 'meter', unitId: METER, pollIntervalMs: 1000, points }),
      deviceConfig({ name: 'healthy', unitId: HEALTHY, pollIntervalMs: 1000, points }),
    ].map(compileDevice),
    sink: {
      onSample: (sample) => {
        const unit = sample.device === 'meter' ? METER : HEALTHY;
        for (const [id, value] of Object.entries(sample.values)) if (value !== truth(unit, Number(id.slice(1)))) wrongValues += 1;
        samples.push(sample);
      },
      onDeviceState: (device, state, reason) => states.push(`${device} ${state}: ${reason}`),
    },
    logger: silentLogger(),
  });
  cleanups.push(() => poller.stop());
  poller.start();
  const meterStats = () => poller.stats().find((s) => s.device === 'meter')!;
  const complete = (s: Sample) => Object.keys(s.values).length === points.length;
  return { setup, samples, states, meterStats, complete, wrongValues: () => wrongValues };
}

describe.each(CASES)('a meter silent on reads longer than its limit, on %s with a %d ms timeout', (transport, timeoutMs, longest, limit, maxCycles) => {
  it(`serves ${longest} registers: ${limit} learned within ${maxCycles} cycles, then reads of at most ${limit} registers, every value the meter's`, async () => {
    const { samples, states, meterStats, complete, wrongValues } = await startMeter(transport, timeoutMs, longest);
    const learned = await waitFor(() => meterStats().learned.length > 0 && meterStats(), { what: 'a read limit learned', timeoutMs: 45_000 });
    expect(learned.learned).toEqual([{ table: 'holding', kind: 'max-count', count: limit, reason: 'timeout' }]);
    expect(learned.cycles).toBeLessThanOrEqual(maxCycles);
    const learnedAfter = learned.cycles;
    await waitFor(() => meterStats().cycles >= learnedAfter + 2 && samples.filter((s) => s.device === 'meter' && complete(s)).length >= 2,
      { what: 'complete samples of the meter', timeoutMs: 30_000 });
    // After the lesson only short reads go out, so the meter reads in full every cycle that is not guarded.
    expect(samples.filter((s) => s.device === 'healthy' && complete(s)).length).toBeGreaterThanOrEqual(2);
    expect(wrongValues()).toBe(0);
    expect(states.filter((s) => s.startsWith('healthy offline'))).toEqual([]);
  }, 90_000);
});

const lessonOf = (learned: ReturnType<Awaited<ReturnType<typeof startMeter>>['meterStats']>['learned']) =>
  learned.find((l) => l.kind === 'max-count')?.count;

describe.each(['rtu', 'tcp'] as const)('the exact limit on %s (300 ms timeout)', (transport) => {
  it('a meter serving 3 of 8 registers ends read as reads of 3 (halving alone gave 2), every value the meter\'s', async () => {
    const { samples, meterStats, complete, wrongValues } = await startMeter(transport, SHORT_TIMEOUT_MS, 3);
    await waitFor(() => lessonOf(meterStats().learned) === 3, { what: 'the limit 3 found', timeoutMs: 60_000 });
    const at = meterStats().cycles;
    await waitFor(() => meterStats().cycles >= at + 2 && samples.filter((s) => s.device === 'meter' && complete(s)).length >= 2,
      { what: 'complete samples of the meter', timeoutMs: 30_000 });
    expect(lessonOf(meterStats().learned)).toBe(3);
    expect(wrongValues()).toBe(0);
  }, 120_000);

  it('a meter power-cycled with a smaller limit (4, then 2) re-learns within 20 cycles, read in full again, every value its own', async () => {
    const { setup, samples, states, meterStats, complete, wrongValues } = await startMeter(transport, SHORT_TIMEOUT_MS, 4);
    await waitFor(() => lessonOf(meterStats().learned) === 4 && samples.filter((s) => s.device === 'meter' && complete(s)).length >= 2,
      { what: 'the limit 4 learned, complete samples', timeoutMs: 60_000 });
    const cycleAtChange = meterStats().cycles;
    const statesAtChange = states.length;
    setup.longestAnsweredRead = 2;
    const fullAgain = (s: Sample) => s.device === 'meter' && complete(s);
    const samplesAtChange = samples.length;
    await waitFor(() => lessonOf(meterStats().learned) === 2 && samples.slice(samplesAtChange).some(fullAgain),
      { what: 'the limit 2 learned, a complete sample again', timeoutMs: 90_000 });
    expect(meterStats().cycles - cycleAtChange).toBeLessThanOrEqual(20);
    // Learned as a length, not as cuts at every old read's end.
    expect(meterStats().learned.filter((l) => l.kind === 'split')).toEqual([]);
    expect(states.slice(statesAtChange).filter((s) => s.startsWith('healthy offline'))).toEqual([]);
    expect(wrongValues()).toBe(0);
  }, 150_000);
});
