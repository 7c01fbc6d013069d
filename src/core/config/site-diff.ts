// What a reload changes (pure): the running config against a newly loaded one. Gateway-level keys
// cannot change while running (every part is built from them), except the log level; a device is
// replaced when its definition or its bus changed, and a bus restarts when its definition changed.
import type { Config } from './config.js';
import { cloudModeOf, subDevicesOf } from './gateway-mode.js';
import type { BusConfig, ConfigIssue, DeviceConfig, LogLevel, PointConfig, SiteConfig } from './site-types.js';

/** Gateway keys a reload applies; every other `gateway.*` key needs a restart. */
export const LIVE_GATEWAY_KEYS: readonly string[] = ['gateway.logLevel'];

export interface ReloadPlan {
  /** Nothing differs: the reload is a no-op. */
  readonly identical: boolean;
  readonly logLevel: LogLevel | undefined;
  readonly busesAdded: readonly string[];
  readonly busesRemoved: readonly string[];
  /** Buses whose definition changed: the bus and every device on it restart. */
  readonly busesRestarted: readonly string[];
  readonly devicesAdded: readonly string[];
  readonly devicesRemoved: readonly string[];
  /** Devices replaced: their definition changed, or the bus they use (for polls or a stream) restarts. */
  readonly devicesReplaced: readonly string[];
  /**
   * Replaced devices whose cloud link is unchanged (same identity fields, mode, sub-device address
   * and stream identifiers): they keep their MQTT link, or their place on the identity's link.
   */
  readonly devicesKeepingLink: readonly string[];
  readonly devicesKept: readonly string[];
}

export type ReloadDecision = { accepted: true; plan: ReloadPlan } | { accepted: false; issues: ConfigIssue[] };

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Keys JSON.stringify writes out, in its order. */
function writtenKeys(record: object): string {
  return Object.entries(record).filter(([, value]) => value !== undefined && typeof value !== 'function' && typeof value !== 'symbol').map(([key]) => key).join('\n');
}

/**
 * same() for two devices, with each point list written out once per reload, not once per device:
 * devices share their lists (shared-point-lists.ts), and 1,000 lists of 50 points written twice
 * held the event loop ~80 ms. Equal exactly when same(a, b) is.
 */
function sameDeviceWith(listTexts: Map<readonly PointConfig[], string>): (a: DeviceConfig, b: DeviceConfig) => boolean {
  const listText = (points: readonly PointConfig[]) => {
    let text = listTexts.get(points);
    if (text === undefined) {
      text = JSON.stringify(points);
      listTexts.set(points, text);
    }
    return text;
  };
  return (a, b) => {
    const { points: pointsA, ...restA } = a;
    const { points: pointsB, ...restB } = b;
    return writtenKeys(a) === writtenKeys(b) && same(restA, restB) && listText(pointsA) === listText(pointsB);
  };
}

/** Paths of every leaf (or whole subtree present on one side only) where two values differ. */
export function differingPaths(a: unknown, b: unknown, path: string): string[] {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(a) || !isObject(b)) return same(a, b) ? [] : [path];
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.flatMap((key) => differingPaths(a[key], b[key], `${path}.${key}`));
}

/** A bus's share (a TCP server in front of it) restarts by itself: a change of it alone leaves the bus running. */
function withoutShare(bus: BusConfig | undefined): BusConfig | undefined {
  return bus && { ...bus, share: undefined };
}

/** Units a bus serves several requests at once for: part of how the bus is built. */
function concurrentUnits(site: SiteConfig, bus: string): number[] {
  return site.devices.filter((d) => d.bus === bus && d.limits.concurrent).map((d) => d.unitId).sort((x, y) => x - y);
}

function busesOf(device: DeviceConfig): string[] {
  const streamBuses = device.streams.flatMap((s) => (s.target.kind === 'bus' ? [s.target.bus] : []));
  return [device.bus, ...streamBuses];
}

/** What a device's MQTT link is made of (undefined without a cloud block): equal, a replacement keeps the link. */
function linkOf(device: DeviceConfig, config: Config, address: string | undefined): string | undefined {
  const mode = cloudModeOf(device, config.gateway.cloud);
  if (!device.cloud || !mode) return undefined;
  // The timestamp attribute shapes reports only, not the link.
  const identity = { ...device.cloud, timestampAttribute: undefined };
  return JSON.stringify({ mode, identity, address: mode === 'gateway' ? address : undefined, streams: device.streams.map((s) => s.identifier) });
}

/** The reload plan, or every gateway-level key that changed (all or nothing: nothing is applied then). */
export function planReload(running: Config, next: Config): ReloadDecision {
  const fixed = differingPaths(running.gateway, next.gateway, 'gateway').filter((path) => !LIVE_GATEWAY_KEYS.includes(path));
  if (fixed.length > 0) {
    return {
      accepted: false,
      issues: fixed.map((path) => ({ path, message: 'cannot change while fieldgate runs: restart the service to apply it (nothing was reloaded)' })),
    };
  }
  const oldBuses = new Map<string, BusConfig>(running.site.buses.map((b) => [b.name, b]));
  const newBuses = new Map<string, BusConfig>(next.site.buses.map((b) => [b.name, b]));
  const busesAdded = [...newBuses.keys()].filter((name) => !oldBuses.has(name));
  const busesRemoved = [...oldBuses.keys()].filter((name) => !newBuses.has(name));
  const busesRestarted = [...newBuses.keys()].filter((name) => {
    const before = oldBuses.get(name);
    return before !== undefined && (!same(withoutShare(before), withoutShare(newBuses.get(name))) || !same(concurrentUnits(running.site, name), concurrentUnits(next.site, name)));
  });
  const restarting = new Set(busesRestarted);
  const oldDevices = new Map(running.site.devices.map((d) => [d.name, d]));
  // A sub-device address moves only when the site file writes another out (sub-device-addresses.ts).
  const addressOf = (config: Config) => new Map(subDevicesOf(config.site, config.gateway.cloud).map((s) => [s.device.name, s.address]));
  const oldAddresses = addressOf(running);
  const newAddresses = addressOf(next);
  const sameDevice = sameDeviceWith(new Map());
  const devicesAdded: string[] = [];
  const devicesReplaced: string[] = [];
  const devicesKept: string[] = [];
  for (const device of next.site.devices) {
    const before = oldDevices.get(device.name);
    if (!before) devicesAdded.push(device.name);
    else if (!sameDevice(before, device) || busesOf(device).some((bus) => restarting.has(bus)) || oldAddresses.get(device.name) !== newAddresses.get(device.name)) {
      devicesReplaced.push(device.name);
    }
    else devicesKept.push(device.name);
  }
  const names = new Set(next.site.devices.map((d) => d.name));
  const devicesKeepingLink = devicesReplaced.filter((name) => {
    const before = oldDevices.get(name);
    const after = next.site.devices.find((d) => d.name === name);
    const link = before && linkOf(before, running, oldAddresses.get(name));
    return link !== undefined && after !== undefined && link === linkOf(after, next, newAddresses.get(name));
  });
  const devicesRemoved = running.site.devices.map((d) => d.name).filter((name) => !names.has(name));
  const logLevel = running.gateway.logLevel === next.gateway.logLevel ? undefined : next.gateway.logLevel;
  // Device order matters too (status lists devices as the file does), so compare the whole site,
  // a device at a time (one text of 2,000 devices is tens of MB at a reload's peak); addresses by
  // what each device uses, not by where that came from (file or state directory).
  const sameDevices = running.site.devices.length === next.site.devices.length && running.site.devices.every((d, i) => sameDevice(d, next.site.devices[i]!));
  const identical = logLevel === undefined && same(running.site.buses, next.site.buses) && sameDevices && same([...oldAddresses], [...newAddresses]);
  return {
    accepted: true,
    plan: { identical, logLevel, busesAdded, busesRemoved, busesRestarted, devicesAdded, devicesRemoved, devicesReplaced, devicesKeepingLink, devicesKept },
  };
}
