import { beforeEach, describe, expect, it } from 'vitest';
import type { ReadBlock } from '../../src/core/points/codec.js';
import { ModbusExceptionError, ModbusTimeoutError, UnitCoolingDownError, UnitLateReplyPendingError } from '../../src/field/modbus/errors.js';
import { Poller, type PollBus, type Sample, type SampleSink } from '../../src/device/poller.js';
import type { Table } from '../../src/core/points/types.js';
import { silentLogger } from '../../src/ops/log.js';
import { sleep } from '../../src/core/time.js';
import { deviceConfig, pointConfig } from '../helpers/device-configs.js';
import { compileDevice } from '../../src/core/config/compile.js';
import { ManualClock } from '../helpers/manual-clock.js';

const T0 = 1_700_000_000_000;

// Manual time: the poller's schedule and the fake bus's latency run only when a test advances it.
let clock = new ManualClock(T0);
beforeEach(() => {
  clock = new ManualClock(T0);
});

/** Registers hold their own address; each read takes `latencyMs`; `fail` may throw per call. */
class FakeBus implements PollBus {
  latencyMs = 20;
  reads: Array<{ unit: number; table: Table; start: number; count: number; at: number }> = [];
  fail: (unit: number, table: Table, start: number) => Error | undefined = () => undefined;

  async read(unit: number, table: Table, start: number, count: number): Promise<ReadBlock> {
    this.reads.push({ unit, table, start, count, at: clock.now() });
    await sleep(clock, this.latencyMs);
    const err = this.fail(unit, table, start);
    if (err) throw err;
    if (table === 'coil' || table === 'discrete') {
      return { table, start, bits: Array.from({ length: count }, (_, i) => (start + i) % 2 === 1) };
    }
    return { table, start, words: Uint16Array.from({ length: count }, (_, i) => start + i) };
  }
}

class RecordingSink implements SampleSink {
  samples: Sample[] = [];
  states: Array<[string, string, string]> = [];
  onSample(sample: Sample): void {
    this.samples.push(sample);
  }
  onDeviceState(device: string, state: string, reason: string): void {
    this.states.push([device, state, reason]);
  }
}

const meter = deviceConfig({
  name: 'meter',
  unitId: 4,
  pollIntervalMs: 1000,
  points: [
    pointConfig({ id: 'voltage', address: 10, scale: 0.1 }),
    pointConfig({ id: 'energy', address: 12, type: 'uint32' }),
    pointConfig({ id: 'status', address: 200, table: 'input', type: 'int16' }),
    pointConfig({ id: 'relay', address: 3, table: 'coil', type: 'bool' }),
  ],
});

function setup(devices = [meter], random = () => 0.25) {
  const bus = new FakeBus();
  const sink = new RecordingSink();
  const poller = new Poller({ bus, devices: devices.map(compileDevice), sink, logger: silentLogger(), random, clock, wall: clock, timers: clock });
  return { bus, sink, poller };
}

describe('Poller schedule', () => {
  it('starts jittered within one period, then keeps start + k*period regardless of read time', async () => {
    const { bus, poller } = setup();
    let call = 0;
    bus.latencyMs = 0;
    const original = bus.read.bind(bus);
    bus.read = async (...args) => {
      bus.latencyMs = [5, 170, 40][call++ % 3] as number; // uneven durations must not drift the schedule
      return original(...args);
    };
    poller.start();
    await clock.advanceAsync(5_300);
    const cycleStarts = bus.reads.filter((r) => r.table === 'coil').map((r) => r.at - T0); // first in the plan
    expect(cycleStarts).toEqual([250, 1250, 2250, 3250, 4250, 5250]);
    const stopped = poller.stop();
    await clock.advanceAsync(1_000);
    await stopped;
  });

  it('skips (and counts) a cycle that is due while the previous one still runs', async () => {
    const { bus, poller, sink } = setup([deviceConfig({ ...meter, name: 'slow', points: [meter.points[0]!] })], () => 0);
    bus.latencyMs = 2_500;
    poller.start();
    await clock.advanceAsync(6_100);
    // Cycles start at 0 (ends 2500), 3000 (ends 5500), 6000; 1000, 2000, 4000, 5000 are skipped.
    expect(bus.reads.map((r) => r.at - T0)).toEqual([0, 3000, 6000]);
    expect(poller.stats()[0]).toMatchObject({ skippedCycles: 4, cycles: 2 });
    expect(sink.samples).toHaveLength(2);
    const stopped = poller.stop();
    await clock.advanceAsync(3_000);
    await stopped;
  });
});

describe('Poller cycle', () => {
  it('reads the plan, decodes every point and emits one sample', async () => {
    const { bus, poller, sink } = setup();
    poller.start();
    await clock.advanceAsync(1_000);
    expect(bus.reads.map((r) => `${r.table}:${r.start}+${r.count}`).sort()).toEqual(['coil:3+1', 'holding:10+4', 'input:200+1']);
    expect(sink.samples).toHaveLength(1);
    expect(sink.samples[0]).toEqual({
      device: 'meter', ts: T0 + 250, at: T0 + 250, errors: [],
      values: { voltage: 1, energy: 12 * 65536 + 13, status: 200, relay: true },
    });
    expect(sink.states).toEqual([['meter', 'online', 'answering']]);
    await poller.stop();
  });

  it('keeps the values of the requests that worked and reports the one that failed', async () => {
    const { bus, poller, sink } = setup();
    bus.fail = (_unit, table) => (table === 'input' ? new ModbusExceptionError(4, 2) : undefined);
    poller.start();
    await clock.advanceAsync(1_000);
    const sample = sink.samples[0]!;
    expect(sample.values).toEqual({ voltage: 1, energy: 12 * 65536 + 13, relay: true });
    expect(sample.errors).toEqual([{
      points: ['status'], table: 'input', start: 200, count: 1, kind: 'ModbusExceptionError',
      message: 'unit 4 answered with Modbus exception 2 (Illegal data address)',
    }]);
    expect(sink.states).toEqual([['meter', 'online', 'answering']]);
    await poller.stop();
  });

  it('abandons the rest of a cycle after a timeout, and goes offline after 3 such cycles, once', async () => {
    const { bus, poller, sink } = setup();
    bus.fail = (unit) => new ModbusTimeoutError(unit, 200);
    poller.start();
    await clock.advanceAsync(5_000);
    expect(bus.reads).toHaveLength(5); // one request per cycle, the others skipped
    expect(sink.samples).toHaveLength(0);
    expect(sink.states).toEqual([['meter', 'offline', 'unit 4 did not answer within 200 ms']]);
    expect(poller.stats()[0]).toMatchObject({ state: 'offline', failedCycles: 5 });

    bus.fail = () => undefined;
    await clock.advanceAsync(2_000);
    expect(sink.states.map((s) => s[1])).toEqual(['offline', 'online']);
    expect(sink.samples).toHaveLength(2);
    await poller.stop();
  });

  it('goes offline at once when the bus reports the unit cooling down', async () => {
    const { bus, poller, sink } = setup();
    bus.fail = (unit) => new UnitCoolingDownError(unit, 4000);
    poller.start();
    await clock.advanceAsync(1_000);
    expect(sink.states).toEqual([['meter', 'offline', expect.stringMatching(/^unit 4 is cooling down/)]]);
    await poller.stop();
  });

  it('cycles held back by the late-reply guard alone do not take the device offline, the others still read', async () => {
    const { bus, poller, sink } = setup();
    bus.fail = (unit, table) => (table === 'input' ? new UnitLateReplyPendingError(unit, 9000) : undefined);
    poller.start();
    await clock.advanceAsync(3_000);
    expect(sink.samples.length).toBeGreaterThanOrEqual(3); // the guarded read does not abort the cycle
    expect(sink.samples.every((s) => s.values.voltage !== undefined && s.values.status === undefined)).toBe(true);
    bus.fail = (unit) => new UnitLateReplyPendingError(unit, 9000);
    await clock.advanceAsync(5_000);
    expect(sink.states).toEqual([['meter', 'online', 'answering']]);
    expect(poller.stats()[0]).toMatchObject({ state: 'online', failedCycles: 0 });
    // Held-back cycles read nothing and report nothing: `cyclesWithValues` (/status, "one report per
    // such cycle") counts only the cycles that handed a sample over, not cycles - failedCycles.
    const stats = poller.stats()[0]!;
    expect(stats.cycles - stats.failedCycles).toBeGreaterThan(sink.samples.length);
    expect(stats.cyclesWithValues).toBe(sink.samples.length);
    await poller.stop();
  });

  it('names a read length learned since the device last read in its offline reason', async () => {
    const long = deviceConfig({ name: 'long', unitId: 5, pollIntervalMs: 1000, points: [0, 1, 2, 3, 4, 5, 6, 7].map((address) => pointConfig({ id: `r${address}`, address })) });
    const { bus, poller, sink } = setup([long]);
    // Reads longer than 4 registers get no answer; after a timeout the bus cools the unit down for
    // 3.5 s (a bus with cooldown.afterTimeouts 1): the device goes offline on the cool-down, not on
    // the timeout, and once a length was learned the reason says the long reads are the trouble.
    let coolingUntil = 0;
    const read = bus.read.bind(bus);
    bus.read = async (unit, table, start, count) => {
      if (clock.now() < coolingUntil) throw new UnitCoolingDownError(unit, coolingUntil - clock.now());
      if (count <= 4) return read(unit, table, start, count);
      await sleep(clock, 200);
      coolingUntil = clock.now() + 3500;
      throw new ModbusTimeoutError(unit, 200);
    };
    poller.start();
    await clock.advanceAsync(9_000);
    expect(sink.states).toEqual([
      ['long', 'offline', expect.stringMatching(/^unit 5 is cooling down after repeated timeouts/)],
      ['long', 'online', 'answering'],
      ['long', 'offline', expect.stringMatching(/^reads longer than 4 registers time out \(unit 5 is cooling down after repeated timeouts/)],
      ['long', 'online', 'answering'],
    ]);
    expect(poller.stats()[0]!.learned).toEqual([{ table: 'holding', kind: 'max-count', count: 4, reason: 'timeout' }]);
    expect(sink.samples.every((s) => Object.entries(s.values).every(([id, v]) => v === Number(id.slice(1))))).toBe(true);
    await poller.stop();
  });

  it('a sink that throws does not stop polling', async () => {
    const { poller, sink } = setup();
    let calls = 0;
    sink.onSample = () => {
      calls += 1;
      throw new Error('disk full');
    };
    poller.start();
    await clock.advanceAsync(3_000);
    expect(calls).toBe(3);
    await poller.stop();
  });

  it('pollOnce returns the sample without emitting it; unknown devices are a clear error', async () => {
    const { poller, sink } = setup();
    const once = poller.pollOnce('meter');
    await clock.advanceAsync(200);
    expect((await once).values.voltage).toBe(1);
    expect(sink.samples).toHaveLength(0);
    await expect(poller.pollOnce('nope')).rejects.toThrow('unknown device "nope"');
  });

  it('polls the compiled plan it is given, not one of its own', async () => {
    const compiled = compileDevice(meter);
    // The same points read one register at a time: a plan the planner would never make.
    const plan = meter.points.map((point) => ({ table: point.table, start: point.address, count: point.type === 'uint32' ? 2 : 1, points: [point] }));
    const bus = new FakeBus();
    const poller = new Poller({ bus, devices: [{ ...compiled, plan }], sink: new RecordingSink(), logger: silentLogger(), clock, timers: clock });
    const once = poller.pollOnce('meter');
    await clock.advanceAsync(200);
    const sample = await once;
    expect(bus.reads.map((r) => [r.table, r.start, r.count])).toEqual(plan.map((r) => [r.table, r.start, r.count]));
    expect(sample.values).toMatchObject({ voltage: 1, energy: 12 * 65536 + 13, status: 200, relay: true });
  });

  it('names the device when its points cannot be planned (compiling it, before any poller exists)', () => {
    const bad = deviceConfig({ name: 'broken', points: [pointConfig({ id: 'x', address: 0, type: 'string', length: 200 })] });
    expect(() => setup([bad])).toThrow(/^invalid configuration \(1 problem\):\ndevice "broken"/);
  });
});

describe('Poller out-of-turn cycle (pollNow)', () => {
  /** Cycles overlap when one device's reads interleave: each cycle reads coil 3 first, input 200 last. */
  function overlapping(reads: FakeBus['reads']): boolean {
    let open = false;
    for (const r of reads) {
      if (r.table === 'coil') {
        if (open) return true;
        open = true;
      } else if (r.table === 'input') {
        open = false;
      }
    }
    return false;
  }

  it('runs after the cycle in progress, never beside it, reports its sample, and the schedule goes on', async () => {
    const { bus, sink, poller } = setup();
    bus.latencyMs = 100;
    poller.start();
    await clock.advanceAsync(300); // first cycle at 250 ms is reading
    const now = poller.pollNow('meter');
    await clock.advanceAsync(2000);
    const sample = await now;
    expect(sample.values).toMatchObject({ voltage: 1, energy: 12 * 65536 + 13 });
    expect(overlapping(bus.reads)).toBe(false);
    expect(sink.samples).toContainEqual(sample);
    const before = sink.samples.length;
    await clock.advanceAsync(3000);
    expect(sink.samples.length).toBeGreaterThanOrEqual(before + 2);
    const stopped = poller.stop();
    await clock.advanceAsync(1000);
    await stopped;
  });

  it('many at once are serialised; a continuous device keeps polling', async () => {
    const continuous = deviceConfig({ ...meter, pollIntervalMs: 0 });
    const { bus, sink, poller } = setup([continuous]);
    bus.latencyMs = 10;
    poller.start();
    await clock.advanceAsync(100);
    const many = Promise.all(Array.from({ length: 5 }, () => poller.pollNow('meter')));
    await clock.advanceAsync(2000);
    expect(await many).toHaveLength(5);
    expect(overlapping(bus.reads)).toBe(false);
    const before = sink.samples.length;
    await clock.advanceAsync(1000);
    expect(sink.samples.length).toBeGreaterThan(before + 5);
    const stopped = poller.stop();
    await clock.advanceAsync(1000);
    await stopped;
  });

  it('an unknown device is refused', async () => {
    const { poller } = setup();
    await expect(poller.pollNow('nope')).rejects.toThrow('unknown device "nope"');
  });
});
