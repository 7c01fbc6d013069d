// Defaults and normalisation of validateSite: what an omitted key becomes, table-driven.
import { describe, expect, it } from 'vitest';
import { defaultInterFrameDelayMs, t35Ms, validateSite } from '../../../src/core/config/site.js';
import { engineeringRange } from '../../../src/core/points/codec.js';
import type { DeviceConfig, PointConfig, SiteConfig } from '../../../src/core/config/site-types.js';
import type { Parity } from '../../../src/core/config/site-types.js';
import type { ValueType } from '../../../src/core/points/types.js';

const TCP = { name: 'plc', kind: 'tcp', host: '127.0.0.1' };

function site(raw: unknown): SiteConfig {
  const result = validateSite(raw);
  expect(result.issues).toEqual([]);
  return result.site!;
}

function onePoint(point: Record<string, unknown>, device: Record<string, unknown> = {}): PointConfig {
  return site({ buses: [TCP], devices: [{ name: 'd', bus: 'plc', unitId: 1, ...device, points: [point] }] }).devices[0].points[0];
}

describe('bus defaults', () => {
  it('fills an rtu bus', () => {
    expect(site({ buses: [{ name: 'l', kind: 'rtu', path: '/dev/ttyS0' }], devices: [] }).buses[0]).toEqual({
      kind: 'rtu', name: 'l', path: '/dev/ttyS0', baudRate: 9600, parity: 'even', dataBits: 8, stopBits: 1,
      timeoutMs: 1000, interFrameDelayMs: 4.011, echo: false,
      reconnect: { initialMs: 500, maxMs: 30000, jitter: 0.2 },
      cooldown: { afterTimeouts: 3, initialMs: 5000, maxMs: 60000 },
      busyRetries: 3, reopenAfterSilenceMs: 30000, writes: { maxWaitMs: 30000 },
    });
  });

  it('fills a tcp bus', () => {
    expect(site({ buses: [TCP], devices: [] }).buses[0]).toMatchObject({ kind: 'tcp', host: '127.0.0.1', port: 502, timeoutMs: 2000, maxInFlight: 1, reopenAfterSilenceMs: 30000 });
  });

  it('fills an rtu-over-tcp bus', () => {
    const bus = site({ buses: [{ name: 'r', kind: 'rtu-over-tcp', host: 'gw', port: 4001 }], devices: [] }).buses[0];
    expect(bus).toMatchObject({ kind: 'rtu-over-tcp', port: 4001, timeoutMs: 2000, interFrameDelayMs: 5, echo: false, busyRetries: 3 });
  });

  it('keeps explicit shared settings', () => {
    const bus = site({
      buses: [{ ...TCP, reconnect: { maxMs: '2m' }, cooldown: { afterTimeouts: 1 }, busyRetries: 0 }],
      devices: [],
    }).buses[0];
    expect(bus).toMatchObject({ reconnect: { initialMs: 500, maxMs: 120000, jitter: 0.2 }, cooldown: { afterTimeouts: 1 }, busyRetries: 0 });
  });
});

describe('inter-frame delay from the line settings', () => {
  it.each<[number, 7 | 8, Parity, 1 | 2, number, number]>([
    // baud, data bits, parity, stop bits, t3.5 ms, default delay ms
    [1200, 8, 'even', 1, 32.083, 32.084],
    [4800, 7, 'even', 1, 7.292, 7.292],
    [9600, 8, 'even', 1, 4.01, 4.011],
    [9600, 8, 'none', 1, 3.646, 3.646],
    [9600, 8, 'none', 2, 4.01, 4.011],
    [19200, 8, 'even', 1, 2.005, 2.006],
    [19200, 8, 'none', 1, 1.823, 1.823],
    [38400, 8, 'even', 1, 1.75, 1.75],
    [115200, 8, 'none', 1, 1.75, 1.75],
  ])('%i baud %i%s%i', (baud, dataBits, parity, stopBits, t35, delay) => {
    expect(t35Ms(baud, dataBits, parity, stopBits)).toBeCloseTo(t35, 3);
    expect(defaultInterFrameDelayMs(baud, dataBits, parity, stopBits)).toBe(delay);
    const bus = site({ buses: [{ name: 'l', kind: 'rtu', path: '/dev/x', baudRate: baud, dataBits, parity, stopBits }], devices: [] }).buses[0];
    expect(bus).toMatchObject({ interFrameDelayMs: delay });
  });
});

describe('device defaults', () => {
  it('fills poll interval and limits', () => {
    const device: DeviceConfig = site({ buses: [TCP], devices: [{ name: 'd', bus: 'plc', unitId: 0, points: [{ id: 'a', table: 'coil', address: 0 }] }] }).devices[0];
    expect(device).toMatchObject({
      name: 'd', bus: 'plc', unitId: 0, pollIntervalMs: 1000,
      limits: { maxRegistersPerRead: 125, maxBitsPerRead: 2000, maxGap: 8, forceMultiWrite: false, reprobeFailedMs: 60_000, concurrent: false },
    });
  });

  it.each([
    [250, 250], ['500ms', 500], ['2s', 2000], ['1.5m', 90000], ['1h', 3600000], ['1.1s', 1100], ['750', 750], [0, 0], ['0ms', 0],
  ])('pollIntervalMs %j is %i ms', (given, ms) => {
    const device = site({ buses: [TCP], devices: [{ name: 'd', bus: 'plc', unitId: 1, pollIntervalMs: given, points: [{ id: 'a', table: 'coil', address: 0 }] }] }).devices[0];
    expect(device.pollIntervalMs).toBe(ms);
  });
});

describe('point defaults and normalisation', () => {
  it.each<[Record<string, unknown>, Partial<PointConfig>]>([
    [{ table: 'coil' }, { type: 'bool', length: 1, writable: false }],
    [{ table: 'discrete' }, { type: 'bool' }],
    [{ table: 'holding' }, { type: 'uint16', length: 1, wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0, bit: 0 }],
    [{ table: 'input', type: 'float64' }, { length: 4 }],
    [{ table: 'input', type: 'int32' }, { length: 2 }],
    [{ table: 'holding', type: 'string', length: 6 }, { length: 6 }],
    [{ table: 'holding', type: 'bit', bit: 7 }, { bit: 7, length: 1 }],
    [{ table: 'holding', type: 'bool', writable: true }, { type: 'bool', writable: true }],
  ])('%j', (given, expected) => {
    const point = onePoint({ id: 'p', address: 3, ...given });
    expect(point).toMatchObject({ id: 'p', address: 3, ...expected });
    expect(point.report).toEqual({ mode: 'change', deadband: 0, deadbandKind: 'absolute', maxSilenceMs: 0 });
    expect('min' in point).toBe(false);
  });

  it('takes word order, byte order and report defaults from the device, point keys winning', () => {
    const device = { wordOrder: 'little', byteOrder: 'little', report: { mode: 'always', maxSilenceMs: '1m' } };
    expect(onePoint({ id: 'p', table: 'holding', address: 0, type: 'int32' }, device)).toMatchObject({
      wordOrder: 'little', byteOrder: 'little', report: { mode: 'always', deadband: 0, deadbandKind: 'absolute', maxSilenceMs: 60000 },
    });
    const own = onePoint({ id: 'p', table: 'holding', address: 0, type: 'int32', wordOrder: 'big', report: { deadband: 2 } }, device);
    expect(own).toMatchObject({ wordOrder: 'big', byteOrder: 'little', report: { mode: 'always', deadband: 2, maxSilenceMs: 60000 } });
  });

  it('keeps min and max when given', () => {
    expect(onePoint({ id: 'p', table: 'holding', address: 0, type: 'int16', scale: 0.5, writable: true, min: -10, max: 10 })).toMatchObject({ min: -10, max: 10 });
  });

  it('ignores x- keys at the top level (YAML anchors)', () => {
    expect(validateSite({ 'x-common': { a: 1 }, buses: [TCP], devices: [] }).issues).toEqual([]);
  });
});

describe('engineeringRange', () => {
  it.each<[ValueType, number, number, { min: number; max: number } | undefined]>([
    ['uint16', 1, 0, { min: 0, max: 65535 }],
    ['int16', 0.1, 0, { min: -3276.8, max: 3276.7 }],
    ['uint16', -1, 100, { min: -65435, max: 100 }],
    ['int16', 1, -40, { min: -32808, max: 32727 }],
    ['uint32', 0.001, 0, { min: 0, max: 4294967.295 }],
    ['bool', 1, 0, undefined],
    ['string', 1, 0, undefined],
  ])('%s scale %d offset %d', (type, scale, offset, expected) => {
    const range = engineeringRange({ type, scale, offset });
    if (!expected) return expect(range).toBeUndefined();
    expect(range!.min).toBeCloseTo(expected.min, 6);
    expect(range!.max).toBeCloseTo(expected.max, 6);
  });
});
