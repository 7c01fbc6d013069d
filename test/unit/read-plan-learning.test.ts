// Bisection of refused requests: a fake device map (holes, a length limit, long requests that
// time out) against the learner and one poll cycle at a time, without timers.
import { describe, expect, it } from 'vitest';
import type { DeviceLimits, PointConfig } from '../../src/core/config/site-types.js';
import { silentLogger } from '../../src/ops/log.js';
import { asEpoch, asMono } from '../../src/core/time.js';
import type { ReadBlock } from '../../src/core/points/codec.js';
import { ModbusExceptionError, ModbusTimeoutError, UnitCoolingDownError, UnitLateReplyPendingError } from '../../src/field/modbus/errors.js';
import { planReads, splitRequest, type ReadRequest } from '../../src/core/modbus/plan.js';
import { runCycle, type PollBus, type Sample } from '../../src/device/poll-cycle.js';
import type { RequestOptions } from '../../src/field/modbus/bus-request.js';
import { compilePoint } from '../../src/core/points/codec.js';
import { isBitTable, type Table } from '../../src/core/points/types.js';
import { ReadPlanLearner } from '../../src/device/read-plan-learner.js';
import { makePoint } from './points/make-point.js';

const LIMITS: DeviceLimits = { maxRegistersPerRead: 125, maxBitsPerRead: 2000, maxGap: 8, forceMultiWrite: false, reprobeFailedMs: 60_000 };

/** One uint16 (or coil) point per address, id "t<address>". */
function pointsAt(table: Table, ...addresses: number[]): PointConfig[] {
  return addresses.map((address) => makePoint({ id: `${table[0]}${address}`, table, address, type: isBitTable(table) ? 'bool' : 'uint16' }));
}

interface DeviceModel {
  /** Addresses that do not exist: any read touching one answers exception 2. */
  holes?: number[];
  /** Longer reads answer exception 3. */
  maxCount?: number;
  /** Longer reads get no answer. */
  timeoutAbove?: number;
  /** These reads ("start+count") get no answer. */
  timeoutOn?: string[];
  /** The next this many reads get no answer (a device away for a while). */
  silentReads?: number;
}

/** Registers hold address * 3 + 1 (coils: odd addresses set); reads are logged as "start+count". */
class MapDevice implements PollBus {
  reads: string[] = [];
  /** The reads sent as read-length probes (whole, past the bus's late-reply guard of their shape). */
  probes: string[] = [];
  constructor(public model: DeviceModel) {}
  async read(unit: number, table: Table, start: number, count: number, options?: RequestOptions): Promise<ReadBlock> {
    this.reads.push(`${start}+${count}`);
    if (options?.lengthProbe === true) this.probes.push(`${start}+${count}`);
    const { holes = [], maxCount = Infinity, timeoutAbove = Infinity } = this.model;
    if ((this.model.silentReads ?? 0) > 0) {
      this.model.silentReads! -= 1;
      throw new ModbusTimeoutError(unit, 100);
    }
    if (count > timeoutAbove || this.model.timeoutOn?.includes(`${start}+${count}`)) throw new ModbusTimeoutError(unit, 100);
    if (count > maxCount) throw new ModbusExceptionError(unit, 3);
    if (holes.some((h) => h >= start && h < start + count)) throw new ModbusExceptionError(unit, 2);
    if (isBitTable(table)) return { table, start, bits: Array.from({ length: count }, (_, i) => (start + i) % 2 === 1) };
    return { table, start, words: Uint16Array.from({ length: count }, (_, i) => (start + i) * 3 + 1) };
  }
}

function rig(points: PointConfig[], model: DeviceModel, limits: Partial<DeviceLimits> = {}) {
  const device = new MapDevice(model);
  const learner = new ReadPlanLearner(points, { ...LIMITS, ...limits }, silentLogger());
  const codecs = new Map(points.map((p) => [p.id, compilePoint(p)]));
  let now = 0;
  const cycle = async () => {
    device.reads = [];
    device.probes = [];
    const sample: Sample = { device: 'd', ts: asEpoch(now), at: asMono(now), values: {}, errors: [] };
    const outcome = await runCycle({ bus: device, unitId: 1, codecs, learner, now: () => asMono(now) }, sample);
    now += 1000;
    return { sample, outcome, reads: [...device.reads], probes: [...device.probes] };
  };
  return { device, learner, cycle, advance: (ms: number) => { now += ms; } };
}

function expectedValue(point: PointConfig): number | boolean {
  return isBitTable(point.table) ? point.address % 2 === 1 : point.address * 3 + 1;
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('splitRequest', () => {
  const request = (points: PointConfig[]): ReadRequest => planReads(points, LIMITS)[0]!;
  it.each([
    { name: 'two points', points: pointsAt('holding', 0, 1), left: '0+1', right: '1+1', cut: 1 },
    { name: 'odd count: the larger half right', points: pointsAt('holding', 0, 1, 2), left: '0+1', right: '1+2', cut: 1 },
    { name: 'halves are re-spanned over their points', points: pointsAt('holding', 0, 4, 9, 10), left: '0+5', right: '9+2', cut: 9 },
    { name: 'wide points keep their width', points: [makePoint({ id: 'a', address: 0, type: 'float64' }), makePoint({ id: 'b', address: 6, type: 'uint32' })], left: '0+4', right: '6+2', cut: 6 },
    { name: 'bits of one register stay together', points: [makePoint({ id: 'a', address: 0, type: 'bit', bit: 0 }), makePoint({ id: 'b', address: 0, type: 'bit', bit: 1 }), makePoint({ id: 'c', address: 1 })], left: '0+1', right: '1+1', cut: 1 },
  ])('$name', ({ points, left, right, cut }) => {
    const halves = splitRequest(request(points))!;
    expect(`${halves.left.start}+${halves.left.count}`).toBe(left);
    expect(`${halves.right.start}+${halves.right.count}`).toBe(right);
    expect(halves.cut).toBe(cut);
    expect([...halves.left.points, ...halves.right.points].map((p) => p.id)).toEqual(request(points).points.map((p) => p.id));
  });

  it('cannot split one point, nor points sharing one start', () => {
    expect(splitRequest(request(pointsAt('holding', 5)))).toBeUndefined();
    expect(splitRequest(request([makePoint({ id: 'a', address: 3, type: 'bit', bit: 0 }), makePoint({ id: 'b', address: 3, type: 'bit', bit: 7 })]))).toBeUndefined();
  });
});

describe('planReads with learned limits', () => {
  it.each<{ name: string; cuts: Partial<Record<Table, number[]>>; maxCount: Partial<Record<Table, number>>; plan: string[] }>([
    { name: 'a cut splits a merged request', cuts: { holding: [3] }, maxCount: {}, plan: ['0+3', '3+3'] },
    { name: 'two cuts', cuts: { holding: [2, 5] }, maxCount: {}, plan: ['0+2', '2+3', '5+1'] },
    { name: 'cuts in another table do not apply', cuts: { input: [3] }, maxCount: {}, plan: ['0+6'] },
    { name: 'a learned maximum length', cuts: {}, maxCount: { holding: 2 }, plan: ['0+2', '2+2', '4+2'] },
    { name: 'both', cuts: { holding: [1] }, maxCount: { holding: 3 }, plan: ['0+1', '1+3', '4+2'] },
  ])('$name', ({ cuts, maxCount, plan }) => {
    const points = pointsAt('holding', 0, 1, 2, 3, 4, 5);
    const learned = {
      cuts: new Map(Object.entries(cuts).map(([t, c]) => [t as Table, new Set<number>(c)])),
      maxCount: new Map(Object.entries(maxCount).map(([t, c]) => [t as Table, c as number])),
    };
    expect(planReads(points, LIMITS, learned).map((r) => `${r.start}+${r.count}`)).toEqual(plan);
  });
});

describe('bisecting refused reads', () => {
  it.each<{ name: string; points: PointConfig[]; model: DeviceModel; failing: string[]; settled: string[]; learned: string[] }>([
    { name: 'a hole in the gap between two points', points: pointsAt('holding', ...range(0, 4), ...range(6, 9)), model: { holes: [5] }, failing: [], settled: ['0+5', '6+4'], learned: ['split 6'] },
    { name: 'a hole under a point', points: pointsAt('holding', ...range(0, 9)), model: { holes: [4] }, failing: ['h4'], settled: ['0+4', '5+5'], learned: ['isolated 4'] },
    { name: 'two holes, one in a gap', points: pointsAt('holding', 0, 1, 2, 4, 5, 6, 7, 20, 21), model: { holes: [3, 20] }, failing: ['h20'], settled: ['0+3', '4+4', '21+1'], learned: ['split 4', 'isolated 20'] },
    { name: 'a hole in the coils', points: pointsAt('coil', ...range(0, 15), ...range(17, 30)), model: { holes: [16] }, failing: [], settled: ['0+16', '17+14'], learned: ['split 17'] },
    { name: 'exception 3 above 4 registers', points: pointsAt('holding', ...range(0, 9)), model: { maxCount: 4 }, failing: [], settled: ['0+2', '2+2', '4+3', '7+3'], learned: ['split 2', 'split 7', 'split 4'] },
    { name: 'every point a hole', points: pointsAt('holding', 0, 1, 2), model: { holes: [0, 1, 2] }, failing: ['h0', 'h1', 'h2'], settled: [], learned: ['isolated 0', 'isolated 1', 'isolated 2'] },
    { name: 'a healthy map is left alone', points: pointsAt('holding', ...range(0, 9)), model: {}, failing: [], settled: ['0+10'], learned: [] },
  ])('$name', async ({ points, model, failing, settled, learned }) => {
    const { cycle, learner } = rig(points, model);
    const readable = points.filter((p) => !failing.includes(p.id));
    // Every cycle, from the first, reports every readable point with its true value, and fails the rest.
    for (let n = 0; n < 4; n++) {
      const { sample, outcome } = await cycle();
      expect(sample.values).toEqual(Object.fromEntries(readable.map((p) => [p.id, expectedValue(p)])));
      expect(outcome.abort).toBeUndefined();
      if (n === 0) expect(outcome.failures.map((f) => f.point.id).sort()).toEqual([...failing].sort());
      expect(sample.errors.flatMap((e) => e.points).filter((id) => !failing.includes(id))).toEqual([]);
    }
    // Settled: only the learned plan runs, with no refusals.
    const { reads, sample } = await cycle();
    expect(reads).toEqual(settled);
    expect(sample.errors.every((e) => e.kind === 'IsolatedPointError')).toBe(true);
    expect(learner.limitsLearned().map((l) => `${l.kind} ${l.address}`)).toEqual(learned);
  });

  it('sends a read that timed out as its halves, confirms the whole once more, learns a length by halving, then bisects to the exact one', async () => {
    const points = pointsAt('input', ...range(0, 7));
    const { cycle, learner } = rig(points, { timeoutAbove: 4 });
    const first = await cycle();
    expect(first.reads).toEqual(['0+8']);
    expect(first.outcome.abort).toBeInstanceOf(ModbusTimeoutError);
    expect(first.sample.values).toEqual({});
    const second = await cycle();
    // The halves give every value; the whole, sent once more at the end, times out again.
    expect(second.reads).toEqual(['0+4', '4+4', '0+8']);
    // Only the confirming read is a probe: the bus sends it whole though the first 0+8 may still be guarded.
    expect(second.probes).toEqual(['0+8']);
    expect(second.sample.values).toEqual(Object.fromEntries(points.map((p) => [p.id, expectedValue(p)])));
    expect(second.outcome.abort).toBeUndefined();
    expect(learner.limitsLearned()).toEqual([{ table: 'input', kind: 'max-count', count: 4, reason: 'timeout' }]);
    // Between 4 (served) and 8 (timed out): 6 times out, then 5; 4 it is.
    expect(await cycle()).toMatchObject({ reads: ['0+4', '4+4', '0+6'], probes: ['0+6'] });
    expect((await cycle()).reads).toEqual(['0+4', '4+4', '0+5']);
    expect((await cycle()).reads).toEqual(['0+4', '4+4']);
    expect(learner.limitsLearned()).toEqual([{ table: 'input', kind: 'max-count', count: 4, reason: 'timeout' }]);
  });

  it('halves a read whose halves time out too, one level a cycle, never one register a round', async () => {
    const points = pointsAt('input', ...range(0, 9));
    const { cycle, learner } = rig(points, { timeoutAbove: 4 });
    expect((await cycle()).reads).toEqual(['0+10']);
    expect((await cycle()).reads).toEqual(['0+5']);
    expect((await cycle()).reads).toEqual(['0+2', '2+3', '5+5']);
    const fourth = await cycle();
    expect(fourth.reads).toEqual(['0+2', '2+3', '5+2', '7+3', '0+5']);
    expect(Object.keys(fourth.sample.values)).toHaveLength(10);
    expect(fourth.sample.values.i7).toBe(22);
    // As long as the longest read served (3), at least half the one that timed out (5).
    expect(learner.limitsLearned()).toEqual([{ table: 'input', kind: 'max-count', count: 3, reason: 'timeout' }]);
    // Then the one length between 3 and 5 is tried, served: the device's limit, 4.
    expect((await cycle()).reads).toEqual(['0+3', '3+3', '6+3', '9+1', '0+4']);
    expect(learner.limitsLearned()).toEqual([{ table: 'input', kind: 'max-count', count: 4, reason: 'timeout' }]);
    expect((await cycle()).reads).toEqual(['0+4', '4+4', '8+2']);
  });

  it.each([
    { limit: 3, points: 8 }, { limit: 16, points: 24 }, { limit: 5, points: 40 }, { limit: 1, points: 4 },
  ])('a device silent above $limit registers ends read as requests of exactly $limit ($points points)', async ({ limit, points: n }) => {
    const points = pointsAt('holding', ...range(0, n - 1));
    const { cycle, learner } = rig(points, { timeoutAbove: limit });
    for (let i = 0; i < 20; i++) await cycle();
    expect(learner.limitsLearned()).toEqual(limit >= n ? [] : [{ table: 'holding', kind: 'max-count', count: limit, reason: 'timeout' }]);
    const settled = await cycle();
    expect(settled.reads.every((r) => Number(r.split('+')[1]) <= limit)).toBe(true);
    expect(settled.reads.filter((r) => Number(r.split('+')[1]) === limit).length).toBe(Math.floor(n / limit));
    expect(Object.keys(settled.sample.values)).toHaveLength(n);
  });

  it('a length learned from timeouts is re-probed after reprobeFailedMs (doubling while it times out), and forgotten once the whole is served', async () => {
    const points = pointsAt('holding', ...range(0, 7));
    const { cycle, learner, device, advance } = rig(points, { timeoutAbove: 4 }, { reprobeFailedMs: 10_000 });
    for (let i = 0; i < 5; i++) await cycle();
    expect(learner.limitsLearned()).toEqual([{ table: 'holding', kind: 'max-count', count: 4, reason: 'timeout' }]);
    expect((await cycle()).probes).toEqual([]);
    advance(10_000);
    expect((await cycle()).probes).toEqual(['0+5']); // still silent: next re-probe after 20 s
    advance(10_000);
    expect((await cycle()).probes).toEqual([]);
    advance(10_000);
    device.model = {}; // the lesson was false (frames lost at random), or the device was replaced
    expect((await cycle()).probes).toEqual(['0+5']);
    expect(learner.limitsLearned()).toEqual([{ table: 'holding', kind: 'max-count', count: 5, reason: 'timeout' }]);
    expect((await cycle()).probes).toEqual(['0+8']); // the longest that ever timed out, served: no limit
    expect(learner.limitsLearned()).toEqual([]);
    expect((await cycle()).reads).toEqual(['0+8']);
  });

  it('a device power-cycled with a smaller limit: the request it served before times out whole, a shorter length is learned, not a cut', async () => {
    const points = pointsAt('holding', ...range(0, 7));
    const { cycle, learner, device } = rig(points, { timeoutAbove: 4 });
    for (let i = 0; i < 5; i++) await cycle();
    expect((await cycle()).reads).toEqual(['0+4', '4+4']);
    device.model = { timeoutAbove: 2 };
    for (let i = 0; i < 8; i++) await cycle();
    expect(learner.limitsLearned()).toEqual([{ table: 'holding', kind: 'max-count', count: 2, reason: 'timeout' }]);
    const settled = await cycle();
    expect(settled.reads).toEqual(['0+2', '2+2', '4+2', '6+2']);
    expect(Object.keys(settled.sample.values)).toHaveLength(8);
  });

  it('a sparse read that times out is kept at half its length at least, not at its halves', async () => {
    const points = pointsAt('holding', 0, 9);
    const { cycle, learner } = rig(points, { timeoutAbove: 6 });
    await cycle();
    expect((await cycle()).reads).toEqual(['0+1', '9+1', '0+10']);
    expect(learner.limitsLearned()).toEqual([{ table: 'holding', kind: 'max-count', count: 5, reason: 'timeout' }]);
  });

  it('a gateway answering "target device failed to respond" (exception 11) to long reads teaches the same', async () => {
    const points = pointsAt('holding', ...range(0, 7));
    const { cycle, learner, device } = rig(points, {});
    const read = device.read.bind(device);
    device.read = async (unit, table, start, count) => {
      if (count <= 4) return read(unit, table, start, count);
      device.reads.push(`${start}+${count}`);
      throw new ModbusExceptionError(unit, 11);
    };
    expect((await cycle()).reads).toEqual(['0+8']);
    const second = await cycle();
    expect(second.reads).toEqual(['0+4', '4+4', '0+8']);
    expect(Object.keys(second.sample.values)).toHaveLength(8);
    expect(learner.limitsLearned()).toEqual([{ table: 'holding', kind: 'max-count', count: 4, reason: 'exception 11 (Gateway target device failed to respond)' }]);
  });

  it('a read refused by the bus itself (guard, cool-down) is no evidence: its halves are tried again', async () => {
    const points = pointsAt('holding', ...range(0, 7));
    const { cycle, learner, device } = rig(points, { timeoutAbove: 4 });
    await cycle(); // 0+8 times out
    const busRead = device.read.bind(device);
    device.read = async (unit, table, start, count) => {
      device.reads.push(`${start}+${count}`);
      throw new UnitLateReplyPendingError(unit, 5000);
    };
    // The guard holds back only one reply shape: it does not cut the cycle short, each half is asked.
    for (let n = 0; n < 3; n++) {
      const refused = await cycle();
      expect(refused.reads).toEqual(['0+4', '4+4']);
      expect(refused.outcome.abort).toBeUndefined();
      expect(refused.sample.errors.map((e) => e.kind)).toEqual(['UnitLateReplyPendingError', 'UnitLateReplyPendingError']);
      expect(learner.limitsLearned()).toEqual([]);
    }
    device.read = async (unit, table, start, count) => {
      if (start === 0 && count === 8) {
        device.reads.push('0+8');
        throw new UnitCoolingDownError(unit, 5000);
      }
      return busRead(unit, table, start, count);
    };
    // Halves served, the confirming read refused: still no lesson, and no pause either.
    expect((await cycle()).reads).toEqual(['0+4', '4+4', '0+8']);
    expect(learner.limitsLearned()).toEqual([]);
    device.read = busRead;
    expect((await cycle()).reads).toEqual(['0+4', '4+4', '0+8']);
    expect(learner.limitsLearned()).toEqual([{ table: 'holding', kind: 'max-count', count: 4, reason: 'timeout' }]);
    expect(learner.lengthLessonSince(0)).toBe('reads longer than 4 registers time out');
  });

  it('a confirming read refused by the late-reply guard (RTU) goes one register shorter, still longer than a half', async () => {
    const points = pointsAt('holding', ...range(0, 7));
    const { cycle, learner, device } = rig(points, { timeoutAbove: 4 });
    await cycle(); // 0+8 times out: its length is guarded
    const busRead = device.read.bind(device);
    device.read = async (unit, table, start, count, options) => {
      if (count === 8) {
        device.reads.push(`${start}+${count}`);
        throw new UnitLateReplyPendingError(unit, 9000);
      }
      return busRead(unit, table, start, count, options);
    };
    const second = await cycle();
    expect(second.reads).toEqual(['0+4', '4+4', '0+8', '0+7']);
    expect(second.probes).toEqual(['0+7']);
    expect(learner.limitsLearned()).toEqual([{ table: 'holding', kind: 'max-count', count: 4, reason: 'timeout' }]);
  });

  // A device that serves the shorter read (longer than the halves): a lost frame, or a device that
  // serves exactly 7. No lesson yet: the read goes whole again (served as the bus's pieces while the
  // guard holds its length) and its whole length is tried as a probe after each cycle; the first
  // whole read on the wire, once the guard lets it go, tells the two apart.
  it.each([
    ['a lost frame: the whole is served and goes whole again, unconfirmed no more', {}, ['0+8', '0+8'], ['0+8'], []],
    ['a device serving exactly one register less: the whole times out again, 7 is learned', { timeoutAbove: 7 }, ['0+8'], ['0+7', '7+1'],
      [{ table: 'holding', kind: 'max-count', count: 7, reason: 'timeout' }]],
  ] as const)('a served one-shorter confirming read, then %s', async (_name, model: DeviceModel, decisive, after, learned) => {
    const points = pointsAt('holding', ...range(0, 7));
    const { cycle, learner, device } = rig(points, { timeoutOn: ['0+8'] });
    await cycle(); // 0+8 times out: its length is guarded
    const busRead = device.read.bind(device);
    // The bus while the guard holds 8: a probe of 8 is refused, a poll of 8 goes as pieces (served).
    device.read = async (unit, table, start, count, options) => {
      if (count === 8 && options?.lengthProbe === true) {
        device.reads.push(`${start}+${count}`);
        throw new UnitLateReplyPendingError(unit, 9000);
      }
      if (count === 8) {
        device.model = {};
        try {
          return await busRead(unit, table, start, count, options);
        } finally {
          device.model = { timeoutOn: ['0+8'] };
        }
      }
      return busRead(unit, table, start, count, options);
    };
    expect((await cycle()).reads).toEqual(['0+4', '4+4', '0+8', '0+7']);
    for (let n = 0; n < 3; n++) {
      const guarded = await cycle();
      expect(guarded.reads).toEqual(['0+8', '0+8']); // the poll (pieces), the probe refused at once
      expect(Object.keys(guarded.sample.values)).toHaveLength(8);
    }
    expect(learner.limitsLearned()).toEqual([]);
    device.read = busRead;
    device.model = model;
    expect((await cycle()).reads).toEqual(decisive);
    expect(learner.limitsLearned()).toEqual(learned);
    const next = await cycle();
    expect(next.reads).toEqual(after);
    expect(Object.keys(next.sample.values)).toHaveLength(8);
  });

  it('a timeout of a piece the bus sent the read as (late-reply guard) is no evidence: the read is not split for it', async () => {
    const points = pointsAt('holding', ...range(0, 3));
    const { cycle, learner, device } = rig(points, {});
    const busRead = device.read.bind(device);
    device.read = async (unit, table, start, count) => {
      device.reads.push(`${start}+${count}`);
      throw new ModbusTimeoutError(unit, 100, { functionCode: 3, quantity: 2 }); // its piece 0+2 was lost
    };
    const lost = await cycle();
    expect(lost.outcome.abort).toBeInstanceOf(ModbusTimeoutError);
    device.read = busRead;
    expect((await cycle()).reads).toEqual(['0+4']);
    expect(learner.limitsLearned()).toEqual([]);
  });

  it('does not learn from a single timeout, nor from a dead device', async () => {
    const points = pointsAt('holding', ...range(0, 9));
    const { cycle, learner, device } = rig(points, { timeoutAbove: 0 });
    const first = await cycle();
    expect(first.reads).toEqual(['0+10']);
    // One half a cycle, down to a single point.
    expect((await cycle()).reads).toEqual(['0+5']);
    expect((await cycle()).reads).toEqual(['0+2']);
    const fourth = await cycle();
    expect(fourth.reads).toEqual(['0+1']);
    expect(fourth.outcome.abort).toBeInstanceOf(ModbusTimeoutError);
    expect(learner.limitsLearned()).toEqual([]);
    device.model = {};
    expect(Object.keys((await cycle()).sample.values)).toHaveLength(10);
    expect((await cycle()).reads).toEqual(['0+10']);
  });

  it('a single lost reply costs the halves and one confirming read, and teaches nothing', async () => {
    const points = pointsAt('holding', ...range(0, 9));
    const { cycle, learner } = rig(points, { silentReads: 1 });
    expect((await cycle()).reads).toEqual(['0+10']);
    const next = await cycle();
    expect(next.reads).toEqual(['0+5', '5+5', '0+10']);
    expect(Object.keys(next.sample.values)).toHaveLength(10);
    expect((await cycle()).reads).toEqual(['0+10']);
    expect(learner.limitsLearned()).toEqual([]);
  });

  it('re-probes an isolated point only every reprobeFailedMs, and takes it back when it reads again', async () => {
    const points = pointsAt('holding', ...range(0, 5));
    const { cycle, device, advance } = rig(points, { holes: [2] }, { reprobeFailedMs: 10_000 });
    await cycle(); // t=0: isolates h2, next probe at 10 000
    const waiting = await cycle(); // t=1000
    expect(waiting.reads).toEqual(['0+2', '3+3']);
    expect(waiting.sample.errors).toEqual([expect.objectContaining({ points: ['h2'], kind: 'IsolatedPointError' })]);
    advance(8_000);
    const probe = await cycle(); // t=10 000
    expect(probe.reads).toEqual(['0+2', '3+3', '2+1']);
    expect(probe.outcome.failures.map((f) => f.point.id)).toEqual(['h2']);
    device.model = {};
    expect((await cycle()).reads).toEqual(['0+2', '3+3']); // next probe at 20 000
    advance(9_000);
    const recovered = await cycle();
    expect(recovered.reads).toEqual(['0+2', '3+3', '2+1']);
    expect(recovered.sample.values.h2).toBe(7);
    expect((await cycle()).reads).toEqual(['0+6']);
  });
});

describe('learned limits never break the plan', () => {
  const wideAndNarrow = () => [...pointsAt('holding', 0, 5), makePoint({ id: 'text', address: 100, type: 'string', length: 20 })];

  it('a learned shorter length is never below the widest point: a timeout on a shorter request cuts it instead', async () => {
    const { cycle, learner } = rig(wideAndNarrow(), { timeoutOn: ['0+6'] });
    await cycle();
    for (let n = 0; n < 3; n++) {
      const { sample } = await cycle();
      expect(Object.keys(sample.values).sort()).toEqual(['h0', 'h5', 'text']);
      expect(sample.values.h5).toBe(16);
    }
    expect(learner.limitsLearned().map((l) => `${l.kind} ${l.address}`)).toEqual(['split 5']);
    expect((await cycle()).reads).toEqual(['0+1', '5+1', '100+20']);
  });

  it('learnMaxCount on a request narrower than a point keeps every later learning working', () => {
    const points = wideAndNarrow();
    const learner = new ReadPlanLearner(points, LIMITS, silentLogger());
    const narrow = planReads(points, LIMITS)[0]!;
    expect(() => learner.learnMaxCount(narrow, 5, 'timeout', asMono(0))).not.toThrow();
    expect(learner.limitsLearned().filter((l) => l.kind === 'max-count')).toEqual([]);
    expect(() => learner.isolate(points[0]!, 'exception 2', asMono(0))).not.toThrow();
    expect(learner.planAt(asMono(60_000)).requests.map((r) => `${r.start}+${r.count}`)).toEqual(['5+1', '100+20', '0+1']);
  });

  it('a plan that cannot be built leaves the old state and plan, logged once, and never throws', () => {
    const points = wideAndNarrow();
    const errors: unknown[] = [];
    const log = { ...silentLogger(), error: (obj: unknown) => { errors.push(obj); } } as unknown as ReturnType<typeof silentLogger>;
    // The compiled plan was made with wider limits than the learner replans with.
    const learner = new ReadPlanLearner(points, { ...LIMITS, maxRegistersPerRead: 4 }, log, planReads(points, LIMITS));
    learner.isolate(points[0]!, 'exception 2', asMono(0));
    learner.learnCut(planReads(points, LIMITS)[0]!, 5, 'exception 2');
    expect(learner.limitsLearned()).toEqual([]);
    expect(learner.isIsolated('h0')).toBe(false);
    expect(learner.planAt(asMono(0)).requests.map((r) => `${r.start}+${r.count}`)).toEqual(['0+6', '100+20']);
    expect(errors).toHaveLength(1);
  });
});

describe('timeouts of a device that is away', () => {
  it('a dead device costs one timeout per cycle once a split found it silent, and is split again after reprobeFailedMs', async () => {
    const points = pointsAt('holding', ...range(0, 9));
    const { cycle, learner, device, advance } = rig(points, { timeoutAbove: 0 });
    for (const reads of [['0+10'], ['0+5'], ['0+2'], ['0+1']]) expect((await cycle()).reads).toEqual(reads);
    for (let n = 0; n < 5; n++) expect((await cycle()).reads).toEqual(['0+10']);
    expect(learner.limitsLearned()).toEqual([]);
    // Back, but now only short reads answer: split again once the pause (reprobeFailedMs) ran out.
    device.model = { timeoutAbove: 4 };
    advance(60_000);
    for (let n = 0; n < 4; n++) await cycle();
    expect(learner.limitsLearned()).toEqual([{ table: 'holding', kind: 'max-count', count: 3, reason: 'timeout' }]);
    expect(Object.keys((await cycle()).sample.values)).toHaveLength(10);
  });

  it('a device back during the halves does not shorten requests', async () => {
    const points = pointsAt('holding', ...range(0, 9));
    const { cycle, learner, device } = rig(points, { silentReads: 2 });
    expect((await cycle()).reads).toEqual(['0+10']);
    expect((await cycle()).reads).toEqual(['0+5']);
    const back = await cycle();
    expect(back.reads).toEqual(['0+2', '2+3', '5+5', '0+5', '0+10']);
    expect(Object.keys(back.sample.values)).toHaveLength(10);
    expect(learner.limitsLearned()).toEqual([]);
    expect((await cycle()).reads).toEqual(['0+10']);
    expect(device.reads).toEqual(['0+10']);
  });
});
