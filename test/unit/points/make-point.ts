// Test helper: a fully defaulted PointConfig with overrides.
import type { PointConfig } from '../../../src/core/config/site-types.js';

export function makePoint(overrides: Partial<PointConfig> = {}): PointConfig {
  return {
    id: 'p',
    table: 'holding',
    address: 0,
    type: 'uint16',
    bit: 0,
    length: 1,
    wordOrder: 'big',
    byteOrder: 'big',
    scale: 1,
    offset: 0,
    writable: true,
    report: { mode: 'change', deadband: 0, deadbandKind: 'absolute', maxSilenceMs: 0 },
    ...overrides,
  };
}
