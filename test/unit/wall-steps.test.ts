// Steps of the wall clock (NTP on a Pi without a clock chip): noticed once with their size, and
// without effect on any schedule; only the timestamps that leave the process follow them.
import { describe, expect, it } from 'vitest';
import { asEpoch, asMono } from '../../src/core/time.js';
import { WallStepWatch } from '../../src/core/wall-step.js';
import { compileDevice } from '../../src/core/config/compile.js';
import { Poller, type PollBus, type Sample, type SampleSink } from '../../src/device/poller.js';
import { ModbusExceptionError } from '../../src/field/modbus/errors.js';
import { silentLogger } from '../../src/ops/log.js';
import { deviceConfig, pointConfig } from '../helpers/device-configs.js';
import { ManualClock } from '../helpers/manual-clock.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const TEN_YEARS = 3650 * DAY;

describe('WallStepWatch', () => {
  // Each case: readings of [monotonic, wall]; the steps reported at each reading after the first.
  const cases: Array<{ name: string; readings: Array<[number, number]>; steps: Array<number | undefined> }> = [
    { name: 'both clocks advance alike', readings: [[0, 1e12], [5000, 1e12 + 5000], [10_000, 1e12 + 10_000]], steps: [undefined, undefined] },
    { name: 'NTP slewing (0.5 ms/s)', readings: [[0, 1e12], [5000, 1e12 + 5002.5]], steps: [undefined] },
    { name: 'an event-loop stall (both clocks move on)', readings: [[0, 1e12], [60_000, 1e12 + 60_000]], steps: [undefined] },
    { name: 'a step back of 1 h', readings: [[0, 1e12], [5000, 1e12 + 5000 - HOUR]], steps: [-HOUR] },
    { name: 'a step forward of 1 day, then none', readings: [[0, 1e12], [5000, 1e12 + 5000 + DAY], [10_000, 1e12 + 10_000 + DAY]], steps: [DAY, undefined] },
    { name: 'a step of +10 years', readings: [[0, 1e12], [5000, 1e12 + 5000 + TEN_YEARS]], steps: [TEN_YEARS] },
    { name: 'just under the threshold', readings: [[0, 1e12], [5000, 1e12 + 5000 + 1999]], steps: [undefined] },
    { name: 'back and forth every reading', readings: [[0, 1e12], [1000, 1e12 + 1000 - HOUR], [2000, 1e12 + 2000], [3000, 1e12 + 3000 - HOUR]], steps: [-HOUR, HOUR, -HOUR] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const watch = new WallStepWatch();
      const [first, ...rest] = c.readings;
      expect(watch.observe(asMono(first![0]), asEpoch(first![1]))).toBeUndefined();
      expect(rest.map(([mono, wall]) => watch.observe(asMono(mono), asEpoch(wall))?.stepMs)).toEqual(c.steps);
      expect(watch.count()).toBe(c.steps.filter((s) => s !== undefined).length);
    });
  }

  it('says where the wall clock would have been', () => {
    const watch = new WallStepWatch();
    watch.observe(asMono(100), asEpoch(1e12));
    expect(watch.observe(asMono(5100), asEpoch(1e12 + 5000 - HOUR))).toEqual({ stepMs: -HOUR, expectedWall: 1e12 + 5000, wall: 1e12 + 5000 - HOUR });
  });
});

class InstantBus implements PollBus {
  async read(_unit: number, table: 'holding' | 'input' | 'coil' | 'discrete', start: number, count: number) {
    return { table, start, words: Uint16Array.from({ length: count }, (_, i) => start + i) };
  }
}

describe('the poller across wall-clock steps', () => {
  for (const [name, step] of [['-1 h', -HOUR], ['+1 day', DAY], ['+10 years', TEN_YEARS]] as const) {
    it(`polls on its period through a step of ${name}; the samples' ts follow the wall clock, their monotonic time does not`, async () => {
      const clock = new ManualClock(5_000_000);
      clock.stepWall(1_700_000_000_000 - 5_000_000);
      const samples: Sample[] = [];
      const sink: SampleSink = { onSample: (s) => samples.push(s), onDeviceState: () => undefined };
      const device = deviceConfig({ name: 'meter', pollIntervalMs: 1000, points: [pointConfig({ id: 'v', address: 1 })] });
      const poller = new Poller({ bus: new InstantBus(), devices: [compileDevice(device)], sink, logger: silentLogger(), random: () => 0, clock, wall: clock, timers: clock });
      poller.start();
      await clock.advanceAsync(2500);
      const before = samples.length;
      clock.stepWall(step);
      await clock.advanceAsync(5000);
      await poller.stop();
      // Five more periods, five more cycles: the step neither stopped nor rushed the schedule.
      expect(samples.length - before).toBe(5);
      const after = samples.slice(before);
      expect(after.map((s) => s.at - samples[before - 1]!.at)).toEqual([1000, 2000, 3000, 4000, 5000]);
      expect(after.every((s) => s.ts === s.at + (1_700_000_000_000 - 5_000_000) + step)).toBe(true);
      expect(poller.stats()[0]!.skippedCycles).toBe(0);
    });
  }
});

describe('read-plan lessons across the two clocks', () => {
  it('re-probes an isolated point every reprobeFailedMs of monotonic time through a step back of the wall clock', async () => {
    const clock = new ManualClock(5_000_000);
    clock.stepWall(1_700_000_000_000);
    const reads: number[] = [];
    const bus: PollBus = {
      async read(_unit, table, start, count) {
        reads.push(start);
        if (start <= 11 && start + count > 11) throw new ModbusExceptionError(1, 2);
        return { table, start, words: Uint16Array.from({ length: count }, (_, i) => start + i) };
      },
    };
    const device = deviceConfig({
      name: 'meter', pollIntervalMs: 1000, limits: { maxRegistersPerRead: 125, maxBitsPerRead: 2000, maxGap: 10, forceMultiWrite: false, reprobeFailedMs: 10_000 },
      points: [pointConfig({ id: 'a', address: 10 }), pointConfig({ id: 'b', address: 11 }), pointConfig({ id: 'c', address: 12 })],
    });
    const poller = new Poller({ bus, devices: [compileDevice(device)], sink: { onSample: () => undefined, onDeviceState: () => undefined }, logger: silentLogger(), random: () => 0, clock, wall: clock, timers: clock });
    poller.start();
    await clock.advanceAsync(15_500);
    const before = reads.length;
    // NTP sets the clock back an hour: the re-probes keep their 10 s period.
    clock.stepWall(-HOUR);
    await clock.advanceAsync(30_000);
    await poller.stop();
    // b learned isolated in the first cycle, then asked alone once per 10 s: 3 times in these 30 s, not 30, not 0.
    const aloneB = reads.slice(before).filter((start) => start === 11).length;
    expect(aloneB).toBeGreaterThanOrEqual(2);
    expect(aloneB).toBeLessThanOrEqual(4);
  });
});
