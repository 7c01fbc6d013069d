// What the device page gets at open: each point's settings for people, its latest value and age,
// its health, and its 15-minute history; live changes follow on the event stream.
import type { DeviceConfig } from '../../core/config/site-types.js';
import type { PointValue } from '../../core/points/types.js';
import type { DeviceStatus } from '../status.js';
import type { LiveFeed } from './live-feed.js';
import type { EpochMs } from '../../core/time.js';

export interface DeviceView {
  name: string;
  bus: string;
  unitId: number;
  pollIntervalMs: number;
  online: boolean;
  lastPollAgeMs: number | null;
  points: Array<{
    id: string; table: string; address: number; type: string; unit?: string; writable: boolean;
    value?: PointValue; ageMs?: number; failing?: { error: string; message: string; sinceMs: number };
  }>;
  history: Record<string, Array<[number, number]>>;
  now: number;
}

/** `now`: the wall clock, as the feed's sample times and the failures' starts (the page shows them). */
export function deviceView(device: DeviceConfig, status: DeviceStatus | undefined, latest: Readonly<Record<string, PointValue>>, feed: LiveFeed | undefined, now: EpochMs): DeviceView {
  const times = feed?.valueTimes(device.name) ?? {};
  const failing = new Map((status?.failingPoints ?? []).map((f) => [f.point, f]));
  return {
    name: device.name, bus: device.bus, unitId: device.unitId, pollIntervalMs: device.pollIntervalMs,
    online: status?.online ?? false, lastPollAgeMs: status?.lastPollAgeMs ?? null,
    points: device.points.map((p) => {
      const f = failing.get(p.id);
      return {
        id: p.id, table: p.table, address: p.address, type: p.type, writable: p.writable,
        ...(p.unit !== undefined ? { unit: p.unit } : {}),
        ...(latest[p.id] !== undefined ? { value: latest[p.id] } : {}),
        ...(times[p.id] !== undefined ? { ageMs: now - times[p.id] } : {}),
        ...(f ? { failing: { error: f.error, message: f.message, sinceMs: now - f.since } } : {}),
      };
    }),
    history: feed?.history.of(device.name, now) ?? {},
    now,
  };
}
