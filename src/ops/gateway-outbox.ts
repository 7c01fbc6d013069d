// The gateway's outbox: opened in the configured mode, its backlog logged at start, replay
// progress logged at a bounded rate, and its figures for /status and metrics.
import { join } from 'node:path';
import { openOutbox } from '../cloud/outbox/open-outbox.js';
import { DEFAULT_RECORD_OVERHEAD_BYTES } from '../cloud/outbox/outbox-options.js';
import type { ReportOutbox } from '../core/outbox-types.js';
import type { CloudSettings } from '../core/config/site-types.js';
import type { Logger } from './log.js';
import { backlogOf, ReplayProgress } from '../core/outbox-backlog.js';
import type { OutboxReadState, OutboxStats, OutboxStorageState } from '../core/outbox-types.js';
import type { OutboxReadStatus, OutboxStatus, OutboxStorageStatus } from './status.js';
import { systemTime, type TimeWithWall } from '../core/time.js';

export interface GatewayOutbox {
  readonly outbox: ReportOutbox;
  status(now: number): OutboxStatus;
  /** Called from the gateway's ticker: replaces a deleted or corrupt file, logs backlog transitions and replay progress. */
  tick(now: number, ackedTotal: number): void;
  /** Full above 80 %, clear again below 70 % (hysteresis), for the gateway's transition log. */
  fill(): number;
  resetFullWarning(): void;
  /** Drops every report queued for a device that left the site, counted as dropped (status, metrics); returns how many. */
  discard(device: string): number;
  /** After the file is taken up late (a start without it), once per take-up: its earlier run's rows are queued now. */
  onFileTakenUp(listener: () => void): void;
}

export function openGatewayOutbox(stateDir: string, cloud: CloudSettings, logger: Logger, wake: (devices: ReadonlySet<string>) => void, time: TimeWithWall = systemTime): GatewayOutbox {
  const settings = cloud.outbox;
  const mode = settings.mode ?? 'memory-first';
  const durableAfterMs = settings.durableAfterMs ?? 1000;
  // The drops of one "outbox full" episode (caps), summed until fill is back under 70 %.
  let episode: { records: number; byDevice: Record<string, number>; since: number } | undefined;
  const path = join(stateDir, 'outbox.sqlite');
  const takenUp: Array<() => void> = [];
  const outbox = openOutbox(mode, {
    path,
    flushIntervalMs: settings.commitIntervalMs,
    durableAfterMs,
    maxBytesTotal: settings.maxBytes,
    recordOverheadBytes: settings.recordOverheadBytes ?? DEFAULT_RECORD_OVERHEAD_BYTES,
    onDrop: (info) => {
      // Rare and each one a damaged record: one line each (with its seq), never published.
      if (info.reason === 'checksum') logger.error({ ...info, effect: 'not published, counted as dropped' }, 'outbox record failed its checksum');
    },
    onLoss: (loss) => {
      // Checksum failures have their own line per record (onDrop).
      if (loss.reason === 'checksum') return;
      const fields = { reason: loss.reason, total: loss.records, bytes: loss.bytes, byDevice: loss.byDevice };
      // Reports lost to a failing disk (the last spill on close) or a corrupt file: one line per event, every device in it.
      if (loss.reason === 'write-failed' || loss.reason === 'file-lost') {
        logger.error(fields, 'outbox reports lost');
        return;
      }
      // A removed device's queue: the site's choice, not a fault (the removal logs its own context).
      if (loss.reason === 'device-removed') {
        logger.warn(fields, 'outbox reports lost');
        return;
      }
      // Caps: the episode's first drops at once, its totals when it ends (resetFullWarning).
      if (!episode) {
        episode = { records: 0, byDevice: {}, since: time.now() };
        logger.warn({ ...fields, policy: 'the device holding the most bytes loses its oldest first' }, 'outbox full: dropping oldest reports');
      }
      episode.records += loss.records;
      for (const [device, n] of Object.entries(loss.byDevice)) episode.byDevice[device] = (episode.byDevice[device] ?? 0) + n;
    },
    // Never inside the outbox's own call (a take-up can happen in a peek): its listeners discard.
    onFileAttached: () => queueMicrotask(() => {
      for (const listener of takenUp) listener();
    }),
    onMovedAside: (moved) => logger.error({ ...moved }, 'outbox file corrupt: moved aside, a fresh one is used'),
    onCommit: wake,
    // One line per transition, never per attempt: a full card is not made fuller by the log.
    onStorage: (state) => {
      if (state.state === 'failing') logger.error({ cause: state.cause, path, effect: 'reports kept in memory only: no crash window holds until the file takes writes again' }, 'outbox storage failing');
      else logger.info({ failedWrites: state.failedWrites, path }, 'outbox storage back');
    },
    // Delivery of the devices whose rows cannot be read waits (order holds); one line each way.
    onReads: (state) => {
      if (state.state === 'failing') logger.error({ cause: state.cause, path, effect: 'devices with reports on disk wait: reads are retried with backoff, nothing newer is sent first' }, 'outbox reads failing');
      else logger.info({ failedReads: state.failedReads, path }, 'outbox reads back');
    },
    storageRetryMs: settings.storageRetryMs,
    condemnAfterMs: settings.condemnAfterMs,
    time,
  });
  const atStart = backlogOf(outbox.stats(), time.wallNow());
  logger.info({ mode, durableAfterMs, ...atStart }, 'outbox backlog at start');
  // A report held longer than the crash window (or the group commit) was not acknowledged in time.
  const progress = new ReplayProgress(settings.progressLogMs ?? 10_000, Math.max(durableAfterMs, settings.commitIntervalMs, 1000));
  return {
    outbox,
    status(now) {
      const s = outbox.stats();
      const b = backlogOf(s, time.wallNow());
      return {
        depth: b.reports, bytes: s.bytes, maxBytes: settings.maxBytes, dropped: s.dropped, mode, onDisk: b.onDisk, inMemory: b.inMemory, oldestAgeMs: b.oldestAgeMs,
        ...(s.storage ? { storage: storageStatusOf(s.storage, now) } : {}),
        ...(s.reads ? { reads: readStatusOf(s.reads, now) } : {}),
        droppedByDevice: droppedByDevice(s),
      };
    },
    // Counted by the outbox itself: kept across restarts (outbox_counts) and in the loss line.
    discard: (device) => outbox.discard(device),
    onFileTakenUp: (listener) => takenUp.push(listener),
    tick(now, ackedTotal) {
      outbox.checkFile?.();
      const event = progress.next(now, backlogOf(outbox.stats(), time.wallNow()), ackedTotal);
      if (event) logger[event.level](event.fields, event.message);
    },
    fill: () => outbox.stats().bytes / settings.maxBytes,
    resetFullWarning: () => {
      if (!episode) return;
      logger.warn({ total: episode.records, byDevice: episode.byDevice, durationMs: time.now() - episode.since }, 'outbox drop episode over');
      episode = undefined;
    },
  };
}

/** Reports dropped per device (kept across restarts), devices without drops left out. */
export function droppedByDevice(stats: OutboxStats): Record<string, number> {
  return Object.fromEntries(Object.entries(stats.devices).filter(([, d]) => d.dropped > 0).map(([device, d]) => [device, d.dropped]));
}

function readStatusOf(state: OutboxReadState, now: number): OutboxReadStatus {
  return {
    state: state.state, failedReads: state.failedReads,
    ...(state.state === 'failing' ? { cause: state.cause, failingForMs: Math.max(0, now - (state.since ?? now)) } : {}),
  };
}

function storageStatusOf(state: OutboxStorageState, now: number): OutboxStorageStatus {
  const failing = state.state === 'failing';
  return {
    state: state.state, failedWrites: state.failedWrites, crashWindowHolds: !failing,
    ...(failing ? { cause: state.cause, failingForMs: Math.max(0, now - (state.since ?? now)) } : {}),
  };
}
