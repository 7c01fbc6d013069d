// Which points of which devices a register or coil range touches (pure): a write forwarded by a
// bus share reads these points back, as a cloud write reads back the points it wrote.
import type { DeviceConfig } from '../config/site-types.js';
import { type Table, widthOf } from './types.js';

export function pointsCovering(devices: readonly DeviceConfig[], bus: string, unit: number, table: Table, first: number, last: number): Map<string, string[]> {
  const covered = new Map<string, string[]>();
  for (const device of devices) {
    if (device.bus !== bus || device.unitId !== unit) continue;
    const ids = device.points
      .filter((p) => p.table === table && p.address <= last && first <= p.address + widthOf(p.type, p.length) - 1)
      .map((p) => p.id);
    if (ids.length > 0) covered.set(device.name, ids);
  }
  return covered;
}
