// What the device page gets at open: each point's settings for people, its latest value and age,
// its health, and its 15-minute history; live changes follow on the event stream.
import type { DeviceConfig } from '../../core/config/site-types.js';
import type { PointValue } from '../../core/points/types.js';
import type { DeviceStatus } from '../status.js';
import type { LiveFeed } from './live-feed.js';
import type { EpochMs } from '../../core/time.js';
import type { Logger } from '../log.js';

export interface DeviceView {
  name: string;
  bus: string;
  unitId: number;
  pollIntervalMs: number;
  online: boolean;
  /** While offline: why (the poller's reason, or that no poll has succeeded yet) and since when. */
  offline?: { reason: string; sinceMs?: number };
  lastPollAgeMs: number | null;
  /** Whether the device has a cloud identity (the page offers the cloud's values only then). */
  cloud: boolean;
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
  const online = status?.online ?? false;
  const change = feed?.stateOf(device.name);
  const offline = online ? undefined : change?.state === 'offline'
    ? { reason: change.reason, sinceMs: now - change.at }
    : { reason: status?.lastPollAgeMs === null || status === undefined ? 'no successful poll yet' : 'device offline' };
  return {
    name: device.name, bus: device.bus, unitId: device.unitId, pollIntervalMs: device.pollIntervalMs,
    online, ...(offline ? { offline } : {}), lastPollAgeMs: status?.lastPollAgeMs ?? null, cloud: device.cloud !== undefined,
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

/** A point's latest value on the overview: id, value, unit. */
export type OverviewValue = [string, PointValue, string];

/** Values shown per device on the overview: its first few points that have one. */
const OVERVIEW_POINTS = 4;

export function overviewValues(devices: readonly DeviceConfig[], latest: (device: string) => Readonly<Record<string, PointValue>>): Record<string, OverviewValue[]> {
  const shown: Record<string, OverviewValue[]> = {};
  for (const device of devices) {
    const values = latest(device.name);
    shown[device.name] = device.points.filter((p) => values[p.id] !== undefined).slice(0, OVERVIEW_POINTS).map((p) => [p.id, values[p.id], p.unit ?? '']);
  }
  return shown;
}

/** The cloud's stored values of a device's points; only the error's kind goes to the browser (a cloud error's text may carry the device's token: it is in the URL). */
export async function cloudValues(device: DeviceConfig, read: ((device: DeviceConfig, keys: readonly string[]) => Promise<Record<string, unknown>>) | undefined, log: Logger): Promise<{ status: number; body: Record<string, unknown> }> {
  if (!read || !device.cloud) return { status: 404, body: { error: `device ${device.name} has no cloud view` } };
  try {
    return { status: 200, body: { device: device.name, attributes: await read(device, device.points.map((p) => p.id)) } };
  } catch (err) {
    log.warn({ device: device.name, err }, 'cloud view read failed');
    return { status: 502, body: { error: `the cloud did not answer the read (${(err as Error).name}); see the log` } };
  }
}
