// After a write a share forwarded: the site's points it covers are read back through their
// device's command service and reported like a cloud write's confirmed values.
import type { DeviceConfig } from '../core/config/site-types.js';
import type { Logger } from '../core/logger.js';
import { pointsCovering } from '../core/points/covered-points.js';
import type { PointValue } from '../core/points/types.js';
import type { PointReadResult } from '../device/point-reads.js';

export interface ReadBackWiring {
  /** A device's read-back of some points (its command service), undefined when it does not run. */
  readBack: (device: string, ids: string[]) => Promise<PointReadResult> | undefined;
  /** Values a read-back confirmed, reported like a cloud write's. */
  confirmed: (device: string, values: Record<string, PointValue>) => void;
}

export type WrittenTable = Parameters<typeof pointsCovering>[3];

/** Reads back what a forwarded write touched on `bus` (never throws; failures are logged). */
export function readBackWritten(
  wiring: ReadBackWiring, devices: readonly DeviceConfig[], bus: string, unit: number, table: WrittenTable, first: number, last: number, log: Logger,
): void {
  for (const [device, ids] of pointsCovering(devices, bus, unit, table, first, last)) {
    const reading = wiring.readBack(device, ids);
    if (!reading) continue;
    void reading.then((result) => {
      const points = Object.keys(result.values);
      if (points.length > 0) wiring.confirmed(device, result.values);
      log.debug({ device, points, unread: [...Object.keys(result.failed), ...Object.keys(result.absent)] }, 'share write read back');
    }, (err: unknown) => log.warn({ err, device }, 'read-back after a share write failed'));
  }
}
