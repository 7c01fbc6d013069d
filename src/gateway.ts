// startGateway: wires the site's buses, pollers, outbox, cloud sessions, health endpoint and
// systemd notifications. Readiness never waits on the network.
import { mkdirSync } from 'node:fs';
import type { Config } from './core/config/site-types.js';
import type { GatewayDeps, GatewayHandle } from './gateway-types.js';
import { openGatewayOutbox } from './ops/gateway-outbox.js';
import { startHealthServer, type HealthServer } from './ops/health.js';
import { componentLogger } from './ops/log.js';
import { createNorthbound } from './northbound.js';
import { Reporter } from './device/reporter.js';
import { createCommandServices, createSouthbound } from './southbound.js';
import type { GatewayStatus } from './ops/status.js';
import { createNotifier, watchdogIntervalMs } from './ops/systemd.js';
import { FIELDGATE_VERSION } from './core/version.js';
import { TransitionLog } from './core/transitions.js';
import { busProgress, linkProgress, ProgressWatch } from './ops/watchdog.js';
import { DEFAULT_REOPEN_AFTER_SILENCE_MS } from './field/modbus/bus-supervision.js';

export async function startGateway(config: Config, deps: GatewayDeps): Promise<GatewayHandle> {
  const { site, gateway } = config;
  const logger = deps.logger;
  const notifier = deps.notifier ?? createNotifier(deps.env, logger);
  const startedAt = Date.now();
  mkdirSync(gateway.stateDir, { recursive: true, mode: 0o700 });

  const store = openGatewayOutbox(gateway.stateDir, gateway.cloud, logger, (devices) => {
    for (const device of devices) northbound.sessions.get(device)?.notify();
  });
  const outbox = store.outbox;
  const levels = deps.componentLevels;
  const reporter = new Reporter(site.devices, outbox, componentLogger(logger, 'reporter', levels));
  const southbound = createSouthbound(site, config.compiled, reporter, logger, levels, gateway.cloud.inbound.busShare);
  const commands = createCommandServices(config.compiled, southbound, componentLogger(logger, 'commands', levels));
  const northbound = await createNorthbound({ site, cloud: gateway.cloud, stateDir: gateway.stateDir, outbox, reporter, commands, buses: southbound.buses, logger, ...(levels ? { componentLevels: levels } : {}), ...(deps.secrets ? { secrets: deps.secrets } : {}) });

  const status = (): GatewayStatus => {
    const now = Date.now();
    const pollStats = new Map([...southbound.pollers.values()].flatMap((p) => p.stats()).map((s) => [s.device, s]));
    return {
      version: FIELDGATE_VERSION,
      startedAt: new Date(startedAt).toISOString(),
      uptimeS: (now - startedAt) / 1000,
      buses: southbound.busStatus(now - startedAt),
      devices: site.devices.map((d) => {
        const last = reporter.lastSampleAt(d.name);
        const poll = pollStats.get(d.name);
        return {
          name: d.name, bus: d.bus, online: reporter.isOnline(d.name), points: d.points.length,
          lastPollAgeMs: last === undefined ? null : Math.max(0, now - last), skippedCycles: poll?.skippedCycles ?? 0,
          ...(poll ? { overrunning: poll.overrunning, failingPoints: poll.failingPoints, pointFailures: poll.pointFailures, learned: poll.learned } : {}),
        };
      }),
      links: northbound.linkStatus(),
      outbox: store.status(now),
      rateQueue: northbound.sessions.size > 0 ? northbound.rateQueueStatus() : null,
    };
  };

  southbound.start();
  northbound.start();
  // A poller is stalled when no cycle of any of its devices ended within 3 periods (+ slack for timeouts).
  const slowestPeriod = new Map(site.buses.map((b) => [b.name, Math.max(0, ...site.devices.filter((d) => d.bus === b.name).map((d) => d.pollIntervalMs))]));
  const reopenAfter = new Map(site.buses.map((b) => [b.name, b.reopenAfterSilenceMs ?? DEFAULT_REOPEN_AFTER_SILENCE_MS]));
  const progress = new ProgressWatch(() => {
    const backlog = outbox.stats().devices;
    const links = northbound.linkStatus().map((l) => ({ device: l.device, up: l.state === 'up', backlog: backlog[l.device]?.depth ?? 0, acked: l.publishes }));
    return [
      ...[...southbound.pollers.entries()].map(([bus, p]) => ({
        name: `poller ${bus}`,
        counter: p.stats().reduce((sum, s) => sum + s.cycles + s.failedCycles + s.skippedCycles, 0),
        expectedWithinMs: 3 * (slowestPeriod.get(bus) ?? 0) + 30_000,
      })),
      // Timed-out cycles keep the poller loop alive but are no progress of the bus: see busProgress.
      ...busProgress([...southbound.buses.values()].map((b) => ({ bus: b.name, ...b.progress() })), (bus) => reopenAfter.get(bus) ?? DEFAULT_REOPEN_AFTER_SILENCE_MS),
      ...linkProgress(links, gateway.cloud.keepaliveS),
    ];
  });
  let health: HealthServer | undefined;
  if (gateway.health.enabled) {
    try {
      health = await startHealthServer({ port: gateway.health.port, snapshot: status, stalledLoops: () => progress.stalled(Date.now()), logger: componentLogger(logger, 'health', levels) });
    } catch (err) {
      logger.error({ err, port: gateway.health.port }, 'health endpoint could not start; continuing without it');
    }
  }

  const summary = (): string => {
    const s = status();
    const online = s.devices.filter((d) => d.online).length;
    const up = s.links.filter((l) => l.state === 'up').length;
    return `${online}/${s.devices.length} devices online, ${up}/${s.links.length} links up, outbox ${s.outbox?.depth ?? 0}`;
  };
  notifier.ready(`polling ${site.devices.length} devices on ${site.buses.length} buses`);
  logger.info({ devices: site.devices.length, buses: site.buses.length, links: northbound.sessions.size, healthPort: health?.port }, 'gateway started');
  const watchdogMs = watchdogIntervalMs(deps.env, process.pid);
  const transitions = new TransitionLog(logger);
  let rateLimitedSeen = 0;
  const ticker = setInterval(() => {
    // Ping only while every poller makes progress: a wedged loop gets the service restarted.
    if (progress.stalled(Date.now()).length === 0) notifier.watchdog();
    notifier.status(summary());
    const fill = store.fill();
    // Hysteresis: warn above 80 %, all clear only below 70 %, so a level near 80 % does not flap.
    const over = fill >= 0.8 || (transitions.isActive('outbox') && fill >= 0.7);
    transitions.update('outbox', over, 'outbox over 80 % full', 'outbox back under 70 %', { bytes: outbox.stats().bytes, maxBytes: gateway.cloud.outbox.maxBytes });
    if (!over) store.resetFullWarning();
    store.tick(Date.now(), northbound.linkStatus().reduce((n, l) => n + l.publishes, 0));
    const limited = northbound.rateQueueStatus()?.rateLimited ?? 0;
    transitions.update('rate', limited > rateLimitedSeen, 'cloud rate limited (429)', 'cloud rate limit cleared', { total429: limited });
    rateLimitedSeen = limited;
  }, Math.min(watchdogMs ?? 5_000, 5_000));
  ticker.unref();

  let stopping: Promise<void> | undefined;
  return {
    status,
    latestValues: (device) => reporter.latest(device),
    healthPort: health?.port,
    stop() {
      stopping ??= (async () => {
        clearInterval(ticker);
        notifier.stopping('stopping: draining outbox');
        logger.info('gateway stopping');
        await southbound.stop();
        outbox.flush();
        // Ordered drain: give connected links a few seconds to send what is left; the rest stays
        // on disk for the next start.
        const drainUntil = Date.now() + gateway.cloud.drainMs;
        while (Date.now() < drainUntil && outbox.stats().depth > 0 && northbound.linkStatus().some((l) => l.state === 'up')) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        await northbound.stop();
        await health?.close();
        outbox.close();
        notifier.close();
        logger.info('gateway stopped');
      })();
      return stopping;
    },
  };
}
