// readPoints (the command path's reads) against a fake device map with a hole: planned with the
// poller's learned limits, a refused merged request read point by point, decode errors per point.
import { describe, expect, it } from 'vitest';
import type { DeviceLimits, PointConfig } from '../../src/core/config/site-types.js';
import type { DeviceIo } from '../../src/core/device-write-types.js';
import { ModbusExceptionError, ModbusTimeoutError } from '../../src/field/modbus/errors.js';
import { readPoints } from '../../src/device/point-reads.js';
import { compilePoint, type ReadBlock } from '../../src/core/points/codec.js';
import type { Table } from '../../src/core/points/types.js';
import { makePoint } from './points/make-point.js';

const LIMITS: DeviceLimits = { maxRegistersPerRead: 125, maxBitsPerRead: 2000, maxGap: 8, forceMultiWrite: false };

/** Register n holds n * 3 + 1; a read touching a hole answers exception 2; `short` reads lose their last word. */
class HoleDevice implements DeviceIo {
  reads: string[] = [];
  constructor(private readonly holes: number[], private readonly opts: { short?: string; timeout?: boolean } = {}) {}
  async read(table: Table, start: number, count: number): Promise<ReadBlock> {
    this.reads.push(`${start}+${count}`);
    if (this.opts.timeout) throw new ModbusTimeoutError(1, 100);
    if (this.holes.some((h) => h >= start && h < start + count)) throw new ModbusExceptionError(1, 2);
    const length = this.opts.short === `${start}+${count}` ? count - 1 : count;
    return { table, start, words: Uint16Array.from({ length }, (_, i) => (start + i) * 3 + 1) };
  }
  async write(): Promise<void> {}
  async sleep(): Promise<void> {}
}

const points: PointConfig[] = [0, 1, 2, 4, 5].map((address) => makePoint({ id: `r${address}`, address }));
const codecs = new Map(points.map((p) => [p.id, compilePoint(p)]));
const ids = points.map((p) => p.id);
const allValues = Object.fromEntries(points.map((p) => [p.id, p.address * 3 + 1]));

describe('readPoints', () => {
  it('plans with the learned cuts: no request spans what the device refuses', async () => {
    const device = new HoleDevice([3]);
    const result = await readPoints(device, codecs, ids, LIMITS, { cuts: new Map([['holding', new Set([4])]]) });
    expect(device.reads).toEqual(['0+3', '4+2']);
    expect({ ...result.values }).toEqual(allValues);
    expect({ ...result.failed }).toEqual({});
  });

  it('plans with a learned shorter length', async () => {
    const device = new HoleDevice([]);
    await readPoints(device, codecs, ids, LIMITS, { maxCount: new Map([['holding', 2]]) });
    expect(device.reads).toEqual(['0+2', '2+1', '4+2']);
  });

  it('reads a refused merged request point by point (nothing learned yet)', async () => {
    const device = new HoleDevice([3]);
    const result = await readPoints(device, codecs, ids, LIMITS);
    expect(device.reads).toEqual(['0+6', '0+1', '1+1', '2+1', '4+1', '5+1']);
    expect({ ...result.values }).toEqual(allValues);
    expect({ ...result.failed }).toEqual({});
  });

  it('fails only the points whose own read is refused', async () => {
    const result = await readPoints(new HoleDevice([2]), codecs, ids, LIMITS);
    expect(Object.keys(result.failed)).toEqual(['r2']);
    expect(result.failed.r2).toMatch(/exception 2|Illegal data address/i);
    expect(Object.keys(result.values).sort()).toEqual(['r0', 'r1', 'r4', 'r5']);
  });

  it('a timeout fails the request without retrying each point', async () => {
    const device = new HoleDevice([], { timeout: true });
    const result = await readPoints(device, codecs, ids, LIMITS);
    expect(device.reads).toEqual(['0+6']);
    expect(Object.keys(result.failed)).toEqual(ids);
  });

  it('a point that does not decode fails alone', async () => {
    const result = await readPoints(new HoleDevice([], { short: '0+6' }), codecs, ids, LIMITS);
    expect(Object.keys(result.failed)).toEqual(['r5']);
    expect({ ...result.values }).toEqual({ r0: 1, r1: 4, r2: 7, r4: 13 });
  });
});

describe('readPoints with scale factors and "not implemented" values', () => {
  // Register n holds n * 3 + 1: W at 10 holds 31, W_SF at 20 holds 61 (out of range), SF at 0 holds 1.
  const scaled = [
    makePoint({ id: 'W', address: 10, type: 'int16', scaleFactor: 'SF', writable: false }),
    makePoint({ id: 'SF', address: 0, type: 'int16', writable: false }),
    makePoint({ id: 'V', address: 11, type: 'int16', scaleFactor: 'BAD_SF', writable: false }),
    makePoint({ id: 'BAD_SF', address: 20, type: 'int16', writable: false }),
    makePoint({ id: 'NI', address: 5, type: 'uint16', notImplemented: 16, writable: false }),
  ];
  const scaledCodecs = new Map(scaled.map((p) => [p.id, compilePoint(p)]));

  it('reads the factor of a requested point with it and applies it', async () => {
    const device = new HoleDevice([]);
    const result = await readPoints(device, scaledCodecs, ['W'], LIMITS);
    expect(device.reads).toEqual(['0+1', '10+1']);
    expect({ ...result.values }).toEqual({ W: 310, SF: 1 });
  });

  it('leaves a point without a value when its factor is out of range, and says why', async () => {
    const result = await readPoints(new HoleDevice([]), scaledCodecs, ['V'], LIMITS);
    expect(result.values.V).toBeUndefined();
    expect(result.failed.V).toMatch(/scale factor "BAD_SF" is 61, outside -10\.\.10/);
  });

  it('reports a "not implemented" point as absent, not as a failure', async () => {
    const result = await readPoints(new HoleDevice([]), scaledCodecs, ['NI'], LIMITS);
    expect({ ...result.values }).toEqual({});
    expect({ ...result.failed }).toEqual({});
  });
});
