// Poller.addDevice / removeDevice (a reload): the other devices' schedules, learned limits and
// point health are untouched; a removed device's running cycle finishes and nothing more of it runs.
import { beforeEach, describe, expect, it } from 'vitest';
import { compileDevice } from '../../src/core/config/compile.js';
import type { ReadBlock } from '../../src/core/points/codec.js';
import type { Table } from '../../src/core/points/types.js';
import { sleep } from '../../src/core/time.js';
import { Poller, type PollBus, type Sample } from '../../src/device/poller.js';
import { ModbusExceptionError } from '../../src/field/modbus/errors.js';
import { silentLogger } from '../../src/ops/log.js';
import { deviceConfig, pointConfig } from '../helpers/device-configs.js';
import { ManualClock } from '../helpers/manual-clock.js';

const T0 = 1_700_000_000_000;
let clock = new ManualClock(T0);
beforeEach(() => {
  clock = new ManualClock(T0);
});

/** Each read takes 50 ms; unit 9 refuses address 11 (the poller learns to read around it). */
const reads: Array<{ unit: number; start: number; at: number }> = [];
const bus: PollBus = {
  async read(unit: number, table: Table, start: number, count: number): Promise<ReadBlock> {
    reads.push({ unit, start, at: clock.now() - T0 });
    await sleep(clock, 50);
    if (unit === 9 && start <= 11 && start + count > 11) throw new ModbusExceptionError(unit, 2);
    return { table, start, words: Uint16Array.from({ length: count }, (_, i) => start + i) };
  },
};

const device = (name: string, unitId: number, pollIntervalMs = 1000) => compileDevice(deviceConfig({
  name, unitId, pollIntervalMs, points: [pointConfig({ id: 'a', address: 10 }), pointConfig({ id: 'b', address: 11 }), pointConfig({ id: 'c', address: 12 })],
}));

describe('Poller reload', () => {
  it('adds and removes devices without moving the others\' schedule or forgetting what they learned', async () => {
    reads.length = 0;
    const samples: Sample[] = [];
    const poller = new Poller({
      bus, devices: [device('keep', 1), device('learner', 9), device('leave', 2)], sink: { onSample: (s) => samples.push(s), onDeviceState: () => undefined },
      logger: silentLogger(), random: () => 0.1, clock, timers: clock,
    });
    poller.start();
    await clock.advanceAsync(3_050);
    const learned = poller.stats().find((s) => s.device === 'learner');
    expect(learned?.learned.length).toBeGreaterThan(0);
    expect(learned?.failingPoints.map((p) => p.point)).toEqual(['b']);

    // Remove while its cycle is running (cycles start at 100, 1100, 2100, 3100 ...).
    await clock.advanceAsync(60); // 3110: every device is mid-cycle
    const removing = poller.removeDevice('leave');
    poller.addDevice(device('new', 3));
    await clock.advanceAsync(100);
    expect(await removing).toBe(true);
    expect(await poller.removeDevice('nope')).toBe(false);
    expect(() => poller.addDevice(device('keep', 1))).toThrow(/already polled/);
    await clock.advanceAsync(3_000);

    // The kept device: one cycle per period, at start + k * period, before and after.
    expect(reads.filter((r) => r.unit === 1).map((r) => r.at)).toEqual([100, 1100, 2100, 3100, 4100, 5100, 6100]);
    expect(poller.stats().find((s) => s.device === 'keep')).toMatchObject({ cycles: 7, skippedCycles: 0 });
    // The learner kept what it learned and its point health, and polls on.
    expect(reads.filter((r) => r.unit === 9 && r.at > 3_200).length).toBeGreaterThan(0);
    expect(poller.stats().find((s) => s.device === 'learner')).toMatchObject({ learned: learned?.learned, failingPoints: learned?.failingPoints });
    // The removed device: its cycle at 3100 finished, nothing after it; not in stats.
    expect(reads.filter((r) => r.unit === 2).every((r) => r.at <= 3_100)).toBe(true);
    expect(poller.stats().map((s) => s.device)).toEqual(['keep', 'learner', 'new']);
    // The added device polls at once (jittered within its first period).
    expect(reads.filter((r) => r.unit === 3).length).toBeGreaterThanOrEqual(3);
    expect(samples.filter((s) => s.device === 'new').length).toBeGreaterThanOrEqual(3);
    expect(poller.deviceNames()).toEqual(['keep', 'learner', 'new']);
    const stopped = poller.stop();
    await clock.advanceAsync(200);
    await stopped;
  });
});
