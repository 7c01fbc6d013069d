// Device and point configs for engine tests, with every default filled in as ops/site-file.ts would.
import type { DeviceConfig, PointConfig } from '../../src/core/config/site-types.js';

export function pointConfig(overrides: Partial<PointConfig> & Pick<PointConfig, 'id' | 'address'>): PointConfig {
  return {
    table: 'holding',
    type: 'uint16',
    bit: 0,
    length: 1,
    wordOrder: 'big',
    byteOrder: 'big',
    scale: 1,
    offset: 0,
    writable: false,
    report: { mode: 'change', deadband: 0, deadbandKind: 'absolute', maxSilenceMs: 0 },
    ...overrides,
  };
}

export function deviceConfig(overrides: Partial<DeviceConfig> & Pick<DeviceConfig, 'name' | 'points'>): DeviceConfig {
  return {
    bus: 'line1',
    unitId: 1,
    pollIntervalMs: 1000,
    limits: { maxRegistersPerRead: 125, maxBitsPerRead: 2000, maxGap: 10, forceMultiWrite: false },
    commands: [],
    streams: [],
    ...overrides,
  };
}
