// Wording helpers: key suggestions, issue order, duration parsing, overlap detection.
import { describe, expect, it } from 'vitest';
import { parseDurationMs } from '../../../src/core/config/duration.js';
import { ConfigError, formatIssue, sortIssues, suggestKey } from '../../../src/core/config/issues.js';
import { findOverlaps } from '../../../src/core/config/overlap.js';
import type { PointConfig } from '../../../src/core/config/site-types.js';
import type { Table, ValueType } from '../../../src/core/points/types.js';

describe('suggestKey', () => {
  const pointKeys = ['id', 'table', 'address', 'type', 'bit', 'length', 'wordOrder', 'byteOrder', 'scale', 'offset', 'writable', 'min', 'max', 'report'];
  it.each([
    ['adress', 'address'],
    ['addres', 'address'],
    ['word_order', 'wordOrder'],
    ['WORDORDER', 'wordOrder'],
    ['tabel', 'table'],
    ['writeable', 'writable'],
    ['colour', undefined],
    ['x', undefined],
  ])('%s -> %s', (typo, expected) => {
    expect(suggestKey(typo, pointKeys)).toBe(expected);
  });
});

describe('sortIssues', () => {
  it('orders by section and list index, keeping the order within one entry', () => {
    const paths = ['devices[10].name', 'devices[2].points[1].min', 'devices[2].bus', 'buses[1].port', 'streams', 'devices[2].points[1].max', 'gateway.logLevel', 'buses', 'devices[2].points[0].id'];
    expect(sortIssues(paths.map((path) => ({ path, message: 'x' }))).map((i) => i.path)).toEqual([
      'gateway.logLevel', 'buses', 'buses[1].port', 'devices[2].bus', 'devices[2].points[0].id', 'devices[2].points[1].min',
      'devices[2].points[1].max', 'devices[10].name', 'streams',
    ]);
  });
});

describe('ConfigError', () => {
  it('carries the issues and lists them in its message', () => {
    const err = new ConfigError([{ path: 'buses[0].kind', message: 'required' }]);
    expect(err.issues).toHaveLength(1);
    expect(err.message).toBe('invalid configuration (1 problem):\nbuses[0].kind: required');
    expect(formatIssue({ path: '', message: 'whole file' })).toBe('whole file');
  });
});

describe('parseDurationMs', () => {
  it.each<[unknown, number | undefined]>([
    [0, 0], [1500, 1500], [2.5, 2.5], ['250ms', 250], ['2s', 2000], [' 3 s ', 3000], ['1.5m', 90000], ['2h', 7200000], ['42', 42],
    [-1, undefined], [Infinity, undefined], ['2 seconds', undefined], ['1d', undefined], ['-5s', undefined], ['', undefined], [true, undefined], [null, undefined],
  ])('%j', (given, expected) => {
    expect(parseDurationMs(given)).toBe(expected);
  });
});

function point(id: string, table: Table, address: number, type: ValueType = 'uint16', extra: Partial<PointConfig> = {}): PointConfig {
  return {
    id, table, address, type, bit: 0, length: 1, wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0, writable: false,
    report: { mode: 'change', deadband: 0, deadbandKind: 'absolute', maxSilenceMs: 0 }, ...extra,
  };
}

describe('findOverlaps', () => {
  it.each<[string, (PointConfig | undefined)[], { index: number; other: number }[]]>([
    ['adjacent registers', [point('a', 'holding', 0, 'float32'), point('b', 'holding', 2)], []],
    ['shared register', [point('a', 'holding', 0, 'float32'), point('b', 'holding', 1)], [{ index: 1, other: 0 }]],
    ['same address in another table', [point('a', 'holding', 0), point('b', 'input', 0), point('c', 'coil', 0)], []],
    ['later point lower in memory', [point('a', 'input', 11, 'uint32'), point('b', 'input', 10, 'uint32')], [{ index: 1, other: 0 }]],
    ['one long point covering two', [point('s', 'holding', 0, 'string', { length: 10 }), point('a', 'holding', 2), point('b', 'holding', 9)], [{ index: 1, other: 0 }, { index: 2, other: 0 }]],
    ['bits of one register', [point('a', 'holding', 5, 'bit', { bit: 0 }), point('b', 'holding', 5, 'bit', { bit: 1 })], []],
    ['same bit twice', [point('a', 'holding', 5, 'bit', { bit: 3 }), point('b', 'holding', 5, 'bit', { bit: 4 }), point('c', 'holding', 5, 'bit', { bit: 4 })], [{ index: 2, other: 1 }]],
    ['bit and word on one register', [point('a', 'holding', 5, 'bit', { bit: 3 }), point('w', 'holding', 5)], [{ index: 1, other: 0 }]],
    ['holes from invalid points', [undefined, point('a', 'coil', 1, 'bool'), undefined, point('b', 'coil', 1, 'bool')], [{ index: 3, other: 1 }]],
  ])('%s', (_name, points, expected) => {
    expect(findOverlaps(points)).toEqual(expected);
  });
});
