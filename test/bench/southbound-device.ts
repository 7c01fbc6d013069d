// The benchmark's devices and result shapes, shared by the southbound bench and its master process.
import type { DeviceConfig, PointConfig } from '../../src/core/config/site-types.js';
import { widthOf, type Table, type ValueType } from '../../src/core/points/types.js';

export interface PollerResult {
  requests: number;
  /** Registers that belong to points. */
  usefulRegisters: number;
  /** Registers on the wire, bridged gaps included. */
  wireRegisters: number;
  seconds: number;
  errors: number;
}

function point(id: string, table: Table, address: number, type: ValueType): PointConfig {
  return { id, table, address, type, bit: 0, length: widthOf(type), wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0, writable: false, report: { mode: 'always', deadband: 0, deadbandKind: 'absolute', maxSilenceMs: 0 } };
}

export type Layout = 'meter' | 'registers';

/**
 * 50 points per device. `meter`: a typical energy-meter map, floats and longs in clusters with
 * small gaps plus two far-away points. `registers`: 16-bit values in two blocks with small gaps
 * (a PLC data block), the layout where merging gains the most.
 */
export function benchDevice(unitId: number, layout: Layout = 'meter'): DeviceConfig {
  const points: PointConfig[] = [];
  if (layout === 'meter') {
    for (let i = 0; i < 20; i += 1) points.push(point(`v${i}`, 'input', i * 2, 'float32'));
    for (let i = 0; i < 10; i += 1) points.push(point(`s${i}`, 'holding', 100 + i * 2, 'uint16'));
    for (let i = 0; i < 10; i += 1) points.push(point(`e${i}`, 'holding', 200 + i * 3, 'int32'));
    for (let i = 0; i < 8; i += 1) points.push(point(`q${i}`, 'input', 1000 + i, 'int16'));
    points.push(point('serial', 'holding', 5000, 'uint16'), point('status', 'input', 3000, 'uint16'));
  } else {
    for (let i = 0; i < 25; i += 1) points.push(point(`h${i}`, 'holding', i + Math.floor(i / 10), 'uint16'));
    for (let i = 0; i < 25; i += 1) points.push(point(`i${i}`, 'input', i + Math.floor(i / 10), 'int16'));
  }
  return {
    name: `unit-${unitId}`, bus: 'bench', unitId, pollIntervalMs: 1000, points, commands: [], streams: [],
    limits: { maxRegistersPerRead: 125, maxBitsPerRead: 2000, maxGap: 8, forceMultiWrite: false },
  };
}
