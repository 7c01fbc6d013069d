// The gateway's status picture assembled from what each part reports (pure: time passed in), and
// the one-line summary systemd shows. /status, /metrics, /healthz and `fieldgate status` read it.
import type { DeviceConfig } from '../core/config/site-types.js';
import type { EpochMs, MonoMs } from '../core/time.js';
import { FIELDGATE_VERSION } from '../core/version.js';
import type { DevicePollStats } from '../device/poller.js';
import type { BusStats } from '../field/modbus/bus-stats.js';
import type { ShareStatus } from '../share/share-status.js';
import type { BusStatus, ConfigStatus, GatewayStatus, LinkStatus, OutboxStatus, RateQueueStatus, SubDeviceStatus, WriteOrderStatus } from './status.js';

export interface StatusSources {
  /** Monotonic: uptime and ages. */
  startedAt: MonoMs;
  /** Wall clock: the start as shown. */
  startedAtWall: EpochMs;
  /** The devices of the config running now, in site order. */
  devices(): readonly DeviceConfig[];
  pollStats(): DevicePollStats[];
  busStatus(uptimeMs: number): BusStatus[];
  lastSampleAt(device: string): MonoMs | undefined;
  isOnline(device: string): boolean;
  links(): LinkStatus[];
  outbox(now: number): OutboxStatus;
  /** Null when no device talks to the cloud (the queue is idle by construction). */
  rateQueue(): RateQueueStatus | null;
  config?(): ConfigStatus;
  /** Gateway mode: a sub-device's address and refused reports; undefined for other devices. */
  subDevice?(device: string): SubDeviceStatus | undefined;
  /** Bus shares; none: no `shares` key. */
  shares?(): ShareStatus[];
  /** A device's write order counters (shown once it has written); undefined without a write path. */
  writes?(device: string): WriteOrderStatus | undefined;
  pid?: number;
}

/** `now`: monotonic. */
export function assembleStatus(sources: StatusSources, now: MonoMs): GatewayStatus {
  const pollStats = new Map(sources.pollStats().map((s) => [s.device, s]));
  return {
    version: FIELDGATE_VERSION,
    ...(sources.pid === undefined ? {} : { pid: sources.pid }),
    startedAt: new Date(sources.startedAtWall).toISOString(),
    uptimeS: (now - sources.startedAt) / 1000,
    buses: sources.busStatus(now - sources.startedAt),
    devices: sources.devices().map((d) => {
      const last = sources.lastSampleAt(d.name);
      const poll = pollStats.get(d.name);
      const subDevice = sources.subDevice?.(d.name);
      const writes = sources.writes?.(d.name);
      return {
        name: d.name, bus: d.bus, online: sources.isOnline(d.name), points: d.points.length,
        lastPollAgeMs: last === undefined ? null : Math.max(0, now - last), skippedCycles: poll?.skippedCycles ?? 0,
        ...(poll ? { cyclesWithValues: poll.cyclesWithValues, overrunning: poll.overrunning, failingPoints: poll.failingPoints, pointFailures: poll.pointFailures, learned: poll.learned } : {}),
        ...(poll?.identification ? { identification: poll.identification } : {}),
        ...(subDevice ? { subDevice } : {}),
        ...(writes && writes.written + writes.superseded + writes.coalesced + writes.yielded > 0 ? { writes: { ...writes } } : {}),
      };
    }),
    links: sources.links(),
    outbox: sources.outbox(now),
    rateQueue: sources.rateQueue(),
    ...(sources.config ? { config: sources.config() } : {}),
    ...sharesOf(sources),
  };
}

function sharesOf(sources: StatusSources): { shares?: ShareStatus[] } {
  const shares = sources.shares?.() ?? [];
  return shares.length > 0 ? { shares } : {};
}

/** One bus's figures as /status shows them; utilisation is busy time over the gateway's uptime. */
export function busStatusOf(stats: BusStats, kind: string, uptimeMs: number): BusStatus {
  return {
    name: stats.bus, kind, up: stats.state === 'up',
    transactions: stats.transactions, timeouts: stats.timeouts, exceptions: stats.exceptions, queueDepth: stats.queueDepth,
    queueRejects: stats.queueRejects, cancelled: stats.cancelled, expired: stats.expired,
    failures: stats.timeouts + stats.exceptions + stats.frameErrors + stats.otherErrors,
    discardedReplies: stats.discardedReplies, silenceReopens: stats.silenceReopens,
    lateReplies: stats.lateReplies,
    lateUnits: stats.lateUnits.map(({ unit, lateReplies, slowestAnswerMs }) => ({ unit, lateReplies, slowestAnswerMs })),
    unitsCoolingDown: stats.unitsCoolingDown,
    coolingDownUnits: (stats.coolingDownUnits ?? []).map(({ unit, nextProbeInMs, cooldownLevel, lastFailure }) => ({ unit, nextProbeInMs, cooldownLevel, lastFailure })),
    utilisation: uptimeMs > 0 ? Math.min(1, stats.busyTimeMs / uptimeMs) : 0,
    ...(stats.echoProblem ? { echoProblem: stats.echoProblem } : {}),
  };
}

/** The line systemd shows in `systemctl status`. */
export function statusSummary(status: GatewayStatus): string {
  const online = status.devices.filter((d) => d.online).length;
  const up = status.links.filter((l) => l.state === 'up').length;
  return `${online}/${status.devices.length} devices online, ${up}/${status.links.length} links up, outbox ${status.outbox?.depth ?? 0}`;
}
