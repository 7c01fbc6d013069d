// One poll cycle with SunSpec-style scale factors: a factor holding "not implemented" makes its
// points absent (why, in sample.absent) and is no error; a factor whose read failed still fails them.
import { describe, expect, it } from 'vitest';
import type { DeviceLimits, PointConfig } from '../../../src/core/config/site-types.js';
import { compilePoint, type ReadBlock } from '../../../src/core/points/codec.js';
import type { Table } from '../../../src/core/points/types.js';
import { runCycle, type Sample } from '../../../src/device/poll-cycle.js';
import { ReadPlanLearner } from '../../../src/device/read-plan-learner.js';
import { ModbusExceptionError } from '../../../src/field/modbus/errors.js';
import { silentLogger } from '../../../src/ops/log.js';
import { asEpoch, asMono } from '../../../src/core/time.js';
import { makePoint } from '../points/make-point.js';

const LIMITS: DeviceLimits = { maxRegistersPerRead: 125, maxBitsPerRead: 2000, maxGap: 0, forceMultiWrite: false };
const points: PointConfig[] = [
  makePoint({ id: 'W', address: 0, type: 'int16', scaleFactor: 'W_SF', notImplemented: -32768, writable: false }),
  makePoint({ id: 'W_SF', address: 1, type: 'int16', notImplemented: -32768, writable: false }),
  makePoint({ id: 'A', address: 10, type: 'uint16', scaleFactor: 'A_SF', notImplemented: 0xffff, writable: false }),
  makePoint({ id: 'A_SF', address: 20, type: 'int16', notImplemented: -32768, writable: false }),
];

/** Holding registers from `words`; reads touching `refused` answer exception 2. */
function cycle(words: Record<number, number>, refused: number[] = []): Promise<Sample> {
  const bus = {
    async read(_unit: number, table: Table, start: number, count: number): Promise<ReadBlock> {
      if (refused.some((a) => a >= start && a < start + count)) throw new ModbusExceptionError(1, 2);
      return { table, start, words: Uint16Array.from({ length: count }, (_, i) => words[start + i] ?? 0) };
    },
  };
  const sample: Sample = { device: 'inv', ts: asEpoch(0), at: asMono(0), values: {}, errors: [] };
  const learner = new ReadPlanLearner(points, LIMITS, silentLogger());
  const codecs = new Map(points.map((p) => [p.id, compilePoint(p)]));
  return runCycle({ bus, unitId: 1, codecs, learner, now: () => asMono(0) }, sample).then(() => sample);
}

describe('poll cycle: scale factors', () => {
  it('a factor holding "not implemented" leaves its point absent, not failed', async () => {
    const sample = await cycle({ 0: 1234, 1: 0x8000, 10: 52, 20: 0xffff });
    expect(sample.values).toEqual({ A: 5.2, A_SF: -1 });
    expect(sample.errors).toEqual([]);
    expect(sample.absent).toEqual({ W: 'scale factor "W_SF" not implemented' });
  });

  it('a factor whose read was refused fails its point (an error, never absent)', async () => {
    const sample = await cycle({ 0: 1234, 1: 2, 10: 52 }, [20]);
    expect(sample.values).toEqual({ W: 123400, W_SF: 2 });
    expect(sample.absent).toBeUndefined();
    expect(sample.errors.map((e) => [e.kind, e.points])).toEqual([['ModbusExceptionError', ['A_SF']], ['ScaleFactorError', ['A']]]);
  });

  it('a factor outside -10..10 fails its point', async () => {
    const sample = await cycle({ 0: 1234, 1: 11, 10: 52, 20: 0 });
    expect(sample.values.W).toBeUndefined();
    expect(sample.errors.map((e) => [e.kind, e.points])).toEqual([['ScaleFactorError', ['W']]]);
    expect(sample.absent).toBeUndefined();
  });
});
