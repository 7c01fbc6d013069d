// Poller: overruns logged per transition with no timer per skipped cycle, continuous polling,
// point health transitions, and a device none of whose points reads is not online.
import { beforeEach, describe, expect, it } from 'vitest';
import type { ReadBlock } from '../../src/core/points/codec.js';
import { sleep, type Timers } from '../../src/core/time.js';
import { BusDownError, ModbusExceptionError } from '../../src/field/modbus/errors.js';
import { Poller, type PollBus, type Sample } from '../../src/device/poller.js';
import type { Table } from '../../src/core/points/types.js';
import { captureLogger } from '../helpers/capture-logger.js';
import { deviceConfig, pointConfig } from '../helpers/device-configs.js';
import { compileDevice } from '../../src/core/config/compile.js';
import { ManualClock } from '../helpers/manual-clock.js';

const T0 = 1_700_000_000_000;
// Manual time: the poller's schedule and the fake bus's latency run only when a test advances it.
let clock = new ManualClock(T0);
beforeEach(() => {
  clock = new ManualClock(T0);
});

/** Registers hold their address; `holes` answer exception 2; `down` rejects at once. */
class MapBus implements PollBus {
  latencyMs = 10;
  holes = new Set<number>();
  down = false;
  reads = 0;
  async read(unit: number, table: Table, start: number, count: number): Promise<ReadBlock> {
    this.reads += 1;
    if (this.down) throw new BusDownError('line1', 'port closed');
    await sleep(clock, this.latencyMs);
    for (let a = start; a < start + count; a++) if (this.holes.has(a)) throw new ModbusExceptionError(unit, 2);
    return { table, start, words: Uint16Array.from({ length: count }, (_, i) => start + i) };
  }
}

function setup(pollIntervalMs: number, addresses = [0, 1, 2, 3]) {
  const bus = new MapBus();
  const log = captureLogger();
  const samples: Sample[] = [];
  const states: string[] = [];
  let timersSet = 0;
  const timers: Timers = {
    setTimer(cb, ms) {
      timersSet += 1;
      return clock.setTimer(cb, ms);
    },
  };
  const device = deviceConfig({ name: 'meter', unitId: 3, pollIntervalMs, points: addresses.map((address) => pointConfig({ id: `r${address}`, address })) });
  const poller = new Poller({
    bus, devices: [compileDevice(device)], logger: log.logger, clock, wall: clock, timers, random: () => 0,
    sink: { onSample: (s) => samples.push(s), onDeviceState: (_d, state, reason) => states.push(`${state}: ${reason}`) },
  });
  return { bus, log, samples, states, poller, timersSet: () => timersSet };
}

async function stop(poller: Poller): Promise<void> {
  const stopped = poller.stop();
  await clock.advanceAsync(10_000);
  await stopped;
}

describe('overruns', () => {
  it('logs the overrun once when it starts and once when cycles are back on time, with no timer per skipped cycle', async () => {
    const { bus, log, poller, timersSet } = setup(10);
    bus.latencyMs = 1000; // each cycle (one merged read) overruns 100 periods
    poller.start();
    await clock.advanceAsync(10_005);
    const stats = poller.stats()[0]!;
    expect(stats.cycles).toBeGreaterThanOrEqual(9);
    expect(stats.skippedCycles).toBeGreaterThanOrEqual(800);
    expect(stats.overrunning).toBe(true);
    expect(timersSet()).toBeLessThanOrEqual(stats.cycles + 1); // one per cycle run, none per skipped one
    expect(log.count('poll cycle overrun, skipping')).toBe(1);
    expect(log.count('poll cycles back on time')).toBe(0);

    bus.latencyMs = 1;
    await clock.advanceAsync(1_000);
    expect(log.count('poll cycle overrun, skipping')).toBe(1);
    expect(log.count('poll cycles back on time')).toBe(1);
    const back = log.lines().find((l) => l.msg === 'poll cycles back on time')!;
    expect(back).toMatchObject({ device: 'meter', periodMs: 10 });
    expect(back.skipped).toBeGreaterThanOrEqual(800);
    expect(poller.stats()[0]!.overrunning).toBe(false);
    await stop(poller);
  });
});

describe('continuous polling (pollIntervalMs 0)', () => {
  it('starts the next cycle when the last ends, without timers, and pauses while nothing reads', async () => {
    const { bus, poller, samples, timersSet } = setup(0);
    poller.start();
    await clock.advanceAsync(1_000);
    // Back to back: 1000 ms of 10 ms reads.
    expect(samples.length).toBeGreaterThanOrEqual(98);
    expect(samples.every((s, i) => i === 0 || s.ts - samples[i - 1]!.ts === 10)).toBe(true);
    expect(timersSet()).toBe(1); // the start only
    expect(poller.stats()[0]!.skippedCycles).toBe(0);

    bus.down = true; // rejects at once: must not spin
    const readsBefore = bus.reads;
    await clock.advanceAsync(5_000);
    expect(bus.reads - readsBefore).toBeLessThanOrEqual(6); // one per second
    bus.down = false;
    await clock.advanceAsync(2_000);
    expect(samples.at(-1)!.ts).toBeGreaterThan(T0 + 6_000);
    await stop(poller);
  });
});

describe('point health', () => {
  it('logs a failing point once with its address and exception, and once when it reads again', async () => {
    const { bus, log, poller, samples, states } = setup(1000, [0, 1, 2, 3]);
    bus.holes.add(2);
    poller.start();
    await clock.advanceAsync(5_000);
    expect(samples.at(-1)!.values).toEqual({ r0: 0, r1: 1, r3: 3 });
    expect(log.count('point failing')).toBe(1);
    expect(log.lines().find((l) => l.msg === 'point failing')).toMatchObject({
      device: 'meter', point: 'r2', table: 'holding', address: 2, exceptionCode: 2, exceptionName: 'Illegal data address',
    });
    expect(log.count('read plan learned: point isolated')).toBe(1);
    const stats = poller.stats()[0]!;
    expect(stats.failingPoints).toEqual([expect.objectContaining({ point: 'r2', address: 2, exceptionCode: 2 })]);
    expect(stats.pointFailures).toBe(1);
    expect(states).toEqual(['online: answering']);

    bus.holes.clear();
    await clock.advanceAsync(60_000); // the default re-probe
    expect(samples.at(-1)!.values).toEqual({ r0: 0, r1: 1, r2: 2, r3: 3 });
    expect(log.count('point reading again')).toBe(1);
    expect(log.count('point failing')).toBe(1);
    expect(poller.stats()[0]!.failingPoints).toEqual([]);
    await stop(poller);
  });

  it('a device that answers but none of whose points reads is offline at once, and online when one reads', async () => {
    const { bus, poller, samples, states } = setup(1000, [0, 1]);
    bus.holes = new Set([0, 1]);
    poller.start();
    await clock.advanceAsync(1_500);
    expect(samples).toEqual([]);
    expect(states).toEqual([expect.stringMatching(/^offline: no point reads \(unit 3 answered with Modbus exception 2/)]);
    expect(poller.stats()[0]).toMatchObject({ state: 'offline', failingPoints: [expect.anything(), expect.anything()] });
    bus.holes = new Set([1]);
    await clock.advanceAsync(61_000);
    expect(states).toEqual([expect.stringMatching(/^offline/), 'online: answering']);
    expect(samples.at(-1)!.values).toEqual({ r0: 0 });
    await stop(poller);
  });
});
