// The gateway's operating policy in one place: what the watchdog expects to move and how soon,
// the periodic tick (watchdog ping, systemd status line, outbox-full and 429 transitions, replay
// progress) and the ordered drain on stop. Collaborators and time are passed in.
import type { SiteConfig } from '../core/config/site-types.js';
import type { Logger } from '../core/logger.js';
import { repeatEvery, sleep, type Time, type TimeWithWall } from '../core/time.js';
import { WallStepWatch } from '../core/wall-step.js';
import { TransitionLog } from '../core/transitions.js';
import type { ReportOutbox } from '../core/outbox-types.js';
import { IDENTITY_NAME } from '../device/gateway-wiring.js';
import type { DevicePollStats } from '../device/poller.js';
import type { BusProgress } from '../field/modbus/bus-stats.js';
import { DEFAULT_REOPEN_AFTER_SILENCE_MS } from '../field/modbus/bus-supervision.js';
import { droppedByDevice, type GatewayOutbox } from './gateway-outbox.js';
import type { LinkStatus } from './status.js';
import type { Notifier } from './systemd.js';
import { busProgress, DEFAULT_WATCHDOG_SLACK_MS, linkProgress, type LoopProgress } from './watchdog.js';

export interface ProgressSources {
  pollers: ReadonlyMap<string, { stats(): DevicePollStats[] }>;
  buses: Iterable<{ readonly name: string; progress(): BusProgress }>;
  links(): LinkStatus[];
  outbox: ReportOutbox;
  keepaliveS: number;
  /** Added to every loop's expected time (gateway.health.watchdogSlackMs); absent: 30 s. */
  slackMs?: number;
  /** The devices fieldgate's identity link carries (gateway mode; live across reloads). */
  subDevices: ReadonlySet<string>;
}

/**
 * The devices whose reports a link sends: a device's own link its own; fieldgate's identity link
 * (gateway mode) every sub-device's, since the rows are stored under the sub-devices' names.
 */
export function devicesCarried(link: string, subDevices: ReadonlySet<string>): string[] {
  return link === IDENTITY_NAME ? [IDENTITY_NAME, ...subDevices] : [link];
}

/** The loops the watchdog watches, each with how long it may go without progress; `current`: the site running now (reloads change it). */
export function siteProgress(current: () => SiteConfig, sources: ProgressSources): () => LoopProgress[] {
  const slackMs = sources.slackMs ?? DEFAULT_WATCHDOG_SLACK_MS;
  return () => {
    const site = current();
    // A poller is stalled when no cycle of any of its devices ended within 3 periods (+ the slack, for timeouts).
    const slowestPeriod = new Map(site.buses.map((b) => [b.name, Math.max(0, ...site.devices.filter((d) => d.bus === b.name).map((d) => d.pollIntervalMs))]));
    const reopenAfter = new Map(site.buses.map((b) => [b.name, b.reopenAfterSilenceMs ?? DEFAULT_REOPEN_AFTER_SILENCE_MS]));
    const backlog = sources.outbox.stats().devices;
    const links = sources.links().map((l) => ({
      device: l.device, up: l.state === 'up', acked: l.publishes,
      backlog: devicesCarried(l.device, sources.subDevices).reduce((sum, device) => sum + (backlog[device]?.depth ?? 0), 0),
    }));
    return [
      ...[...sources.pollers.entries()].map(([bus, p]) => ({
        name: `poller ${bus}`,
        counter: p.stats().reduce((sum, s) => sum + s.cycles + s.failedCycles + s.skippedCycles, 0),
        expectedWithinMs: 3 * (slowestPeriod.get(bus) ?? 0) + slackMs,
      })),
      // Timed-out cycles keep the poller loop alive but are no progress of the bus: see busProgress.
      ...busProgress([...sources.buses].map((b) => ({ bus: b.name, ...b.progress() })), (bus) => reopenAfter.get(bus) ?? DEFAULT_REOPEN_AFTER_SILENCE_MS, slackMs),
      ...linkProgress(links, sources.keepaliveS, slackMs),
    ];
  };
}

export interface TickerOptions {
  notifier: Notifier;
  store: GatewayOutbox;
  maxOutboxBytes: number;
  /** Loops that made no progress for too long (an empty list feeds the watchdog). */
  stalled(now: number): string[];
  summary(): string;
  links(): LinkStatus[];
  /** 429 answers seen so far by the cloud request queue. */
  rateLimited(): number;
  logger: Logger;
  /** Monotonic for the tick; the wall clock only to notice its steps. */
  time: TimeWithWall;
  intervalMs: number;
}

/** Starts the periodic tick; returns the function that stops it. */
export function startSupervisionTicker(options: TickerOptions): () => void {
  const { notifier, store, time } = options;
  const transitions = new TransitionLog(options.logger);
  let rateLimitedSeen = 0;
  const wallSteps = new WallStepWatch();
  wallSteps.observe(time.now(), time.wallNow());
  return repeatEvery(time, options.intervalMs, () => {
    const step = wallSteps.observe(time.now(), time.wallNow());
    if (step) {
      options.logger.warn({
        stepMs: step.stepMs, expected: new Date(step.expectedWall).toISOString(), now: new Date(step.wall).toISOString(), steps: wallSteps.count(),
        effect: 'none on polling, timeouts and replay (they use the monotonic clock); report timestamps follow the wall clock',
      }, 'wall clock stepped');
    }
    // Ping only while every loop makes progress: a wedged loop gets the service restarted.
    if (options.stalled(time.now()).length === 0) notifier.watchdog();
    notifier.status(options.summary());
    const fill = store.fill();
    // Hysteresis: warn above 80 %, all clear only below 70 %, so a level near 80 % does not flap.
    const over = fill >= 0.8 || (transitions.isActive('outbox') && fill >= 0.7);
    const stats = store.outbox.stats();
    transitions.update('outbox', over, 'outbox over 80 % full', 'outbox back under 70 %', { bytes: stats.bytes, maxBytes: options.maxOutboxBytes, droppedByDevice: droppedByDevice(stats) });
    if (!over) store.resetFullWarning();
    store.tick(time.now(), options.links().reduce((n, l) => n + l.publishes, 0));
    const limited = options.rateLimited();
    transitions.update('rate', limited > rateLimitedSeen, 'cloud rate limited (429)', 'cloud rate limit cleared', { total429: limited });
    rateLimitedSeen = limited;
  }, { unref: true });
}

/**
 * Ordered drain on stop: connected links get up to drainMs to send what the outbox still holds;
 * the rest stays on disk for the next start.
 */
export async function drainOutbox(outbox: ReportOutbox, anyLinkUp: () => boolean, drainMs: number, time: Time): Promise<void> {
  const until = time.now() + drainMs;
  while (time.now() < until && outbox.stats().depth > 0 && anyLinkUp()) await sleep(time, 50);
}
