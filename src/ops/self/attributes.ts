// fieldgate's own attributes, computed from two status snapshots and the time between them (pure).
// Rates come from counter differences; a rate that cannot be known (no time passed, a counter went
// backwards) is left out rather than reported as a false 0.
import type { ReportValue } from '../../cloud/mqtt/topics.js';
import { emptyRecord, firstNames } from '../../core/device-write-types.js';
import type { BusStatus, GatewayStatus } from '../status.js';

/** One look at the gateway: its status, its resident memory and when both were taken. */
export interface SelfSample {
  status: GatewayStatus;
  rssBytes: number;
  /** Milliseconds, the clock of the caller. */
  at: number;
}

export type SelfAttributes = Record<string, ReportValue>;

/** Offline device names a status summary lists before "and N more". */
export const SUMMARY_NAMES_SHOWN = 20;

function failuresOf(bus: BusStatus): number {
  return bus.failures ?? bus.timeouts + bus.exceptions;
}

function perMinute(count: number, ms: number): number {
  return Math.round((count * 60_000 * 10) / ms) / 10;
}

/** Good and failed transactions per minute since `previous` (since start without one). */
function busRates(bus: BusStatus, previous: BusStatus | undefined, elapsedMs: number): Record<string, number> {
  const failed = failuresOf(bus);
  const good = Math.max(0, bus.transactions - failed);
  const before = previous ? { good: Math.max(0, previous.transactions - failuresOf(previous)), failed: failuresOf(previous) } : { good: 0, failed: 0 };
  const goodDelta = good - before.good;
  const failedDelta = failed - before.failed;
  if (!(elapsedMs > 0) || goodDelta < 0 || failedDelta < 0) return {};
  return { good_per_min: perMinute(goodDelta, elapsedMs), failed_per_min: perMinute(failedDelta, elapsedMs) };
}

/** The attributes fieldgate reports as its own device (docs/northbound.md lists them). */
export function selfAttributes(current: SelfSample, previous?: SelfSample): SelfAttributes {
  const { status } = current;
  const elapsedMs = previous ? current.at - previous.at : status.uptimeS * 1000;
  const buses = emptyRecord<ReportValue>();
  for (const bus of status.buses) {
    const before = previous?.status.buses.find((b) => b.name === bus.name);
    // A bus seen for the first time in a later sample has no baseline: no rate yet.
    const rates = previous && !before ? {} : busRates(bus, before, elapsedMs);
    buses[bus.name] = { up: bus.up, ...rates };
  }
  const attributes: SelfAttributes = {
    version: status.version,
    uptime_s: Math.floor(status.uptimeS),
    devices_online: status.devices.filter((d) => d.online).length,
    devices_total: status.devices.length,
    buses_up: status.buses.filter((b) => b.up).length,
    buses_total: status.buses.length,
    buses,
    links_up: status.links.filter((l) => l.state === 'up').length,
    links_total: status.links.length,
    rss_mb: Math.round(current.rssBytes / 104_857.6) / 10,
  };
  const subDevices = status.devices.flatMap((d) => (d.subDevice ? [d.subDevice] : []));
  if (subDevices.length > 0) {
    // Reports the cloud refused (e.g. an address not bound to this gateway): visible from the cloud too.
    attributes.sub_devices_refused = subDevices.filter((s) => s.refused).length;
    attributes.sub_device_reports_refused = subDevices.reduce((sum, s) => sum + s.reportsRefused, 0);
  }
  if (status.config) {
    attributes.config_generation = status.config.generation;
    attributes.config_sha256 = status.config.sha256;
    attributes.config_loaded_at = status.config.loadedAt;
    // Empty when the last reload was applied (a report value is never null).
    attributes.config_error = status.config.lastError ?? '';
    const site = status.config.site;
    if (site) {
      attributes.site_generation = site.generation;
      attributes.site_state = site.state;
      attributes.site_rollback = site.lastRollback;
    }
  }
  if (status.outbox) {
    attributes.outbox_reports = status.outbox.depth;
    attributes.outbox_bytes = status.outbox.bytes;
    attributes.outbox_oldest_age_s = Math.floor((status.outbox.oldestAgeMs ?? 0) / 1000);
    attributes.outbox_dropped = status.outbox.dropped;
    const storage = status.outbox.storage;
    if (storage) {
      attributes.outbox_storage = storage.state;
      attributes.outbox_crash_safe = storage.crashWindowHolds;
    }
  }
  return attributes;
}

/** What a report is due for on change: devices online, sub-devices refused, each bus up or down, the outbox storage state, and a reload applied or refused. */
export function discreteState(status: GatewayStatus): string {
  const online = status.devices.filter((d) => d.online).length;
  const refused = status.devices.filter((d) => d.subDevice?.refused).length;
  return JSON.stringify([online, refused, status.buses.map((b) => [b.name, b.up]), status.outbox?.storage?.state ?? 'ok', status.config?.generation, status.config?.lastError, status.config?.site?.generation, status.config?.site?.state]);
}

/** The `status` command's answer: small and bounded whatever the size of the site. */
export function statusCommandResult(sample: SelfSample): Record<string, unknown> {
  const { status } = sample;
  const offline = status.devices.filter((d) => !d.online).map((d) => d.name);
  return {
    version: status.version,
    started_at: status.startedAt,
    uptime_s: Math.floor(status.uptimeS),
    devices: { online: status.devices.length - offline.length, total: status.devices.length, offline: firstNames(offline, SUMMARY_NAMES_SHOWN) },
    buses: status.buses.slice(0, SUMMARY_NAMES_SHOWN).map((b) => ({ name: b.name, up: b.up, queue: b.queueDepth, utilisation: Math.round(b.utilisation * 1000) / 1000 })),
    links: { up: status.links.filter((l) => l.state === 'up').length, total: status.links.length },
    outbox: status.outbox ? {
      reports: status.outbox.depth, bytes: status.outbox.bytes, dropped: status.outbox.dropped, oldest_age_s: Math.floor((status.outbox.oldestAgeMs ?? 0) / 1000),
      storage: status.outbox.storage?.state ?? 'ok', ...(status.outbox.storage?.cause ? { storage_cause: status.outbox.storage.cause } : {}),
    } : null,
    rss_mb: Math.round(sample.rssBytes / 104_857.6) / 10,
  };
}
