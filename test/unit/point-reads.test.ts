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

/** Registers in a map (0 when unset); a read touching an address in `silent` times out. */
class MapDevice implements DeviceIo {
  reads: string[] = [];
  constructor(private readonly words: ReadonlyMap<number, number>, private readonly silent: readonly number[] = []) {}
  async read(table: Table, start: number, count: number): Promise<ReadBlock> {
    this.reads.push(`${start}+${count}`);
    if (this.silent.some((a) => a >= start && a < start + count)) throw new ModbusTimeoutError(1, 100);
    return { table, start, words: Uint16Array.from({ length: count }, (_, i) => this.words.get(start + i) ?? 0) };
  }
  async write(): Promise<void> {}
  async sleep(): Promise<void> {}
}

describe('readPoints with scale factors and "not implemented" values', () => {
  // A SunSpec-like map: W scaled by W_SF next to it, A by A_SF far away (its own request).
  const scaled = [
    makePoint({ id: 'W', address: 10, type: 'int16', scaleFactor: 'W_SF', notImplemented: -32768, writable: false }),
    makePoint({ id: 'W_SF', address: 11, type: 'int16', notImplemented: -32768, writable: false }),
    makePoint({ id: 'A', address: 12, type: 'uint16', scaleFactor: 'A_SF', notImplemented: 65535, writable: false }),
    makePoint({ id: 'A_SF', address: 100, type: 'int16', notImplemented: -32768, writable: false }),
    makePoint({ id: 'Hz', address: 13, type: 'uint16', notImplemented: 65535, writable: false }),
    makePoint({ id: 'Name', address: 20, type: 'string', length: 2, notImplemented: '', writable: false }),
  ];
  const scaledCodecs = new Map(scaled.map((p) => [p.id, compilePoint(p)]));
  const NAME = [0x6162, 0x6300]; // "abc"
  const good: Array<[number, number]> = [[10, 1234], [11, 0xffff], [12, 525], [100, 0xfffe], [13, 5025], [20, NAME[0]], [21, NAME[1]]];

  it.each([
    { name: 'a scaled point: its factor is read along and stays out of the result', ids: ['W'], set: [], values: { W: 123.4 }, absent: {}, failed: {} },
    { name: 'a factor asked for itself is returned', ids: ['W', 'W_SF'], set: [], values: { W: 123.4, W_SF: -1 }, absent: {}, failed: {} },
    { name: 'the same factor for two asked points is read once and returned for neither', ids: ['A', 'Hz', 'W'], set: [], values: { A: 5.25, Hz: 5025, W: 123.4 }, absent: {}, failed: {} },
    { name: 'a point holding its "not implemented" value', ids: ['W', 'Hz'], set: [[10, 0x8000]], values: { Hz: 5025 }, absent: { W: /^not implemented \(holds -32768\)$/ }, failed: {} },
    { name: 'a uint16 point holding 0xFFFF', ids: ['Hz'], set: [[13, 0xffff]], values: {}, absent: { Hz: /holds 65535/ }, failed: {} },
    { name: 'an empty string', ids: ['Name'], set: [[20, 0], [21, 0]], values: {}, absent: { Name: /holds an empty string/ }, failed: {} },
    { name: 'a point whose factor is not implemented', ids: ['W'], set: [[11, 0x8000]], values: {}, absent: { W: /^scale factor "W_SF": not implemented/ }, failed: {} },
    { name: 'a factor not implemented, asked with its point', ids: ['W_SF', 'W'], set: [[11, 0x8000]], values: {}, absent: { W_SF: /^not implemented/, W: /^scale factor "W_SF"/ }, failed: {} },
    { name: 'a factor out of range (a foreign register)', ids: ['W'], set: [[11, 11]], values: {}, absent: { W: /^scale factor "W_SF" is 11, outside -10\.\.10$/ }, failed: {} },
    { name: 'a factor far out of range', ids: ['A'], set: [[100, 0x7fff]], values: {}, absent: { A: /is 32767, outside/ }, failed: {} },
    { name: 'a point absent itself says so, not its factor', ids: ['A'], set: [[12, 0xffff], [100, 0x8000]], values: {}, absent: { A: /^not implemented/ }, failed: {} },
  ])('$name', async ({ ids: asked, set, values, absent, failed }) => {
    const words = new Map(good);
    for (const [address, word] of set as Array<[number, number]>) words.set(address, word);
    const result = await readPoints(new MapDevice(words), scaledCodecs, asked, LIMITS);
    expect({ ...result.values }).toEqual(values);
    expect({ ...result.absent }).toEqual(Object.fromEntries(Object.entries(absent).map(([id, why]) => [id, expect.stringMatching(why)])));
    expect({ ...result.failed }).toEqual(failed);
    // Every asked point is answered exactly once: a value, an absence or a failure.
    const answered = [...Object.keys(result.values), ...Object.keys(result.absent), ...Object.keys(result.failed)];
    expect(answered.sort()).toEqual([...new Set(asked)].sort());
  });

  it('a factor that fails on the bus fails its point, with the factor\'s error', async () => {
    const device = new MapDevice(new Map(good), [100]);
    const result = await readPoints(device, scaledCodecs, ['A', 'Hz'], LIMITS);
    expect(device.reads).toEqual(['12+2', '100+1']);
    expect({ ...result.values }).toEqual({ Hz: 5025 });
    expect({ ...result.absent }).toEqual({});
    expect(Object.keys(result.failed)).toEqual(['A']);
    expect(result.failed.A).toMatch(/^scale factor "A_SF" failed: .*1\b.*100 ms/);
  });

  it('a factor asked many times and only as a helper is still read once', async () => {
    const device = new MapDevice(new Map(good));
    const result = await readPoints(device, scaledCodecs, [...Array(500).fill('W'), ...Array(500).fill('A')], LIMITS);
    expect(device.reads).toEqual(['10+3', '100+1']);
    expect(Object.keys(result.values)).toEqual(['W', 'A']);
  });
});
