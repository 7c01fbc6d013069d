// The composition root: every part of a running gateway is built here from the compiled site and
// wired by constructors. No policy lives here: status assembly, watchdog thresholds and the
// periodic tick are in ops/ (status-assembly.ts, supervision.ts). Readiness never waits on the network.
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { Config } from './core/config/config.js';
import { configSecrets } from './core/config/secret-values.js';
import { systemTime } from './core/time.js';
import { createSelfDevice } from './ops/self/wiring.js';
import { Reporter } from './device/reporter.js';
import { createCloudSide, linkStatusOf, rateQueueStatusOf } from './ops/cloud-side.js';
import { deviceLinkUp, dropOrphanQueues, dropOrphanQueuesOnTakeUp } from './ops/removed-devices.js';
import { ConfigState } from './ops/config-state.js';
import type { GatewayDeps, GatewayHandle } from './ops/gateway-handle.js';
import { openGatewayOutbox } from './ops/gateway-outbox.js';
import { startHealthServer, type HealthServer } from './ops/health.js';
import { componentLogger } from './ops/log.js';
import { createReloader } from './ops/reload.js';
import { readSiteFile } from './ops/site-file-reader.js';
import { AddressRecord } from './ops/sub-device-record.js';
import { createCommandServices, createSouthbound } from './ops/southbound.js';
import { assembleStatus, busStatusOf, statusSummary } from './ops/status-assembly.js';
import type { GatewayStatus } from './ops/status.js';
import { drainOutbox, siteProgress, startSupervisionTicker } from './ops/supervision.js';
import { createNotifier, watchdogIntervalMs } from './ops/systemd.js';
import { ProgressWatch } from './ops/watchdog.js';
import { LineCaptures } from './field/modbus/line-capture.js';
import { LiveFeed } from './ops/web/live-feed.js';
import { startWebPage } from './ops/web/wiring.js';
import { Shares } from './share/shares.js';
import { createRemoteSite, createSiteChanges } from './ops/remote-site-wiring.js';
import type { RemoteSite } from './ops/remote-site.js';
import type { SiteChanges } from './ops/site-changes.js';
import { siteGenerationsFor } from './ops/site-store.js';

export type { GatewayDeps, GatewayHandle } from './ops/gateway-handle.js';
export { createCommandService, createCommandServices, createSouthbound, type Southbound } from './ops/southbound.js';

/** Of the config itself when the site file's bytes are not known (tests, benches). */
function configDigest(config: Config): string {
  return createHash('sha256').update(JSON.stringify({ gateway: config.gateway, site: config.site })).digest('hex');
}

export async function startGateway(config: Config, deps: GatewayDeps): Promise<GatewayHandle> {
  const { site, gateway } = config;
  const { logger, componentLevels: levels } = deps;
  const time = deps.time ?? systemTime;
  const notifier = deps.notifier ?? createNotifier(deps.env, logger);
  const startedAt = time.now();
  const startedAtWall = time.wallNow();
  try {
    mkdirSync(gateway.stateDir, { recursive: true, mode: 0o700 });
  } catch {
    // Read-only or full parent: the outbox runs from memory (its storage state says why) and takes
    // its file up once the directory exists; `run`'s state lock logs it and makes the directory.
  }

  // The outbox wakes the sessions of devices whose reports became sendable; sessions exist later.
  let wakeSessions: (devices: ReadonlySet<string>) => void = () => undefined;
  const store = openGatewayOutbox(gateway.stateDir, gateway.cloud, logger, (devices) => wakeSessions(devices));
  const outbox = store.outbox;
  const retiring = { outbox, discard: (device: string) => store.discard(device), log: componentLogger(logger, 'cloud', levels) };
  dropOrphanQueues(site, retiring);
  // Until the reloader exists the start's site runs; then the one running once no reload is applied.
  let runningSite = (): Promise<Config['site']> => Promise.resolve(site);
  dropOrphanQueuesOnTakeUp(store, () => runningSite(), retiring);
  const reporter = new Reporter(site.devices, outbox, componentLogger(logger, 'reporter', levels));
  // The commissioning page sees every sample after the reporter (history rings, live events).
  const feed = gateway.web ? new LiveFeed(reporter, gateway.web.historySamples) : undefined;
  const captures = gateway.web ? new LineCaptures(gateway.web.lineFramesKept) : undefined;
  const southbound = createSouthbound(site, config.compiled, feed ?? reporter, logger, levels, gateway.cloud.inbound.busShare, captures);
  const commandLog = componentLogger(logger, 'commands', levels);
  const commands = createCommandServices(config.compiled, southbound, commandLog);
  const cloudSide = await createCloudSide({
    site, cloud: gateway.cloud, stateDir: gateway.stateDir, outbox, reporter, commands, buses: southbound.buses,
    log: componentLogger(logger, 'cloud', levels), ...(deps.secrets ? { secrets: deps.secrets } : {}),
  });
  const { sessions, queue, gateway: identitySession } = cloudSide;
  wakeSessions = (devices) => {
    for (const device of devices) if (!identitySession?.notify(device)) sessions.get(device)?.notify();
  };
  const links = () => linkStatusOf(cloudSide);
  const addressRecord = new AddressRecord(gateway.stateDir, config, componentLogger(logger, 'cloud', levels), time);
  const configState = new ConfigState(gateway.stateDir, deps.configSha256 ?? configDigest(config), startedAtWall, process.pid,
    (err) => logger.warn({ err, stateDir: gateway.stateDir }, 'config state file not written'));
  // Set once the reloader exists: the status shows the config running now.
  let current = (): Config => config;

  const shares = new Shares(site, {
    buses: southbound.buses, clock: time, log: componentLogger(logger, 'bus', levels),
    readBack: (device, ids) => commands.get(device)?.readBack(ids),
    confirmed: (device, values) => reporter.onConfirmedValues(device, values),
  });
  const status = (): GatewayStatus => assembleStatus({
    startedAt, startedAtWall, pid: process.pid, devices: () => current().site.devices,
    pollStats: () => [...southbound.pollers.values()].flatMap((p) => p.stats()),
    busStatus: (uptimeMs) => [...southbound.buses.values()].map((b) => busStatusOf(b.stats(), southbound.kinds.get(b.name) ?? 'rtu', uptimeMs)),
    lastSampleAt: (device) => reporter.lastSampleAt(device),
    isOnline: (device) => reporter.isOnline(device),
    links, outbox: (now) => store.status(now),
    rateQueue: () => (sessions.size > 0 ? rateQueueStatusOf(queue) : null),
    config: () => ({ ...configState.status(), ...(siteChanges ? { site: siteChanges.status() } : {}) }),
    subDevice: (device) => identitySession?.subDeviceStatus(device),
    shares: () => shares.status(),
    writes: (device) => southbound.writeOrder.counters(device),
  }, time.now());

  const reloadListeners: Array<(next: Config) => void> = [];
  // Every change of the running site (page, `fieldgate reload`, cloud) goes through the generation store.
  const generations = siteGenerationsFor(deps, config, logger);
  let siteChanges: SiteChanges | undefined;
  // Remote configuration answers on the identity only: the way a change came is the way back.
  let remoteSite: RemoteSite | undefined;
  if (generations && deps.siteFile !== undefined) {
    siteChanges = createSiteChanges({
      start: generations, env: deps.env, config, current: () => current(), reload: (load) => handle.reload(load),
      addressHolders: () => addressRecord.holders(), busUp: (name) => southbound.buses.get(name)?.stats().state === 'up',
      linkUp: (device) => links().some((l) => l.device === device && l.state === 'up'), changed: () => selfDevice?.reporter.check(),
      seedFile: deps.siteFile, time, log: componentLogger(logger, 'reload', levels),
    });
    if (identitySession) remoteSite = createRemoteSite(siteChanges, config, () => current(), deps.env, time, componentLogger(logger, 'reload', levels));
  }
  const selfDevice = identitySession
    ? createSelfDevice(identitySession.link, config, { ...southbound, status }, logger, time, (listener) => reloadListeners.push(listener), remoteSite)
    : undefined;

  southbound.start();
  await shares.start();
  cloudSide.start();
  selfDevice?.start();

  const progress = new ProgressWatch(siteProgress(() => current().site, {
    pollers: southbound.pollers, buses: { [Symbol.iterator]: () => southbound.buses.values() }, links, outbox, keepaliveS: gateway.cloud.keepaliveS,
    slackMs: gateway.health.watchdogSlackMs, subDevices: cloudSide.subDevices,
  }));
  let health: HealthServer | undefined;
  if (gateway.health.enabled) {
    try {
      health = await startHealthServer({
        port: gateway.health.port, snapshot: status, stalledLoops: () => progress.stalled(time.now()), logger: componentLogger(logger, 'health', levels),
        ...(gateway.health.eventLoopSampleMs ? { eventLoopSampleMs: gateway.health.eventLoopSampleMs } : {}),
      });
    } catch (err) {
      logger.error({ err, port: gateway.health.port }, 'health endpoint could not start; continuing without it');
    }
  }
  const web = gateway.web ? await startWebPage({
    settings: gateway.web, feed, gateway: { ...southbound, status }, config, current: () => current(), latest: (device) => reporter.latest(device),
    onReload: (listener) => reloadListeners.push(listener), logger, ...(levels ? { levels } : {}), time,
    ...(siteChanges ? { siteChanges } : {}), writers: commands, captures: captures ?? new Map(),
    cloudAttributes: (device, keys) => cloudSide.cloudAttributes(device, keys), ...(deps.secrets ? { secrets: deps.secrets } : {}),
  }) : undefined;
  notifier.ready(`polling ${site.devices.length} devices on ${site.buses.length} buses`);
  logger.info({ devices: site.devices.length, buses: site.buses.length, links: sessions.size, healthPort: health?.port, webPort: web?.port }, 'gateway started');
  const summary = () => statusSummary(status());
  const stopTicker = startSupervisionTicker({
    notifier, store, maxOutboxBytes: gateway.cloud.outbox.maxBytes, stalled: (now) => progress.stalled(now),
    summary, links, rateLimited: () => queue.stats().rateLimited, logger, time,
    intervalMs: Math.min(watchdogIntervalMs(deps.env, process.pid) ?? 5_000, 5_000),
  });
  const reloader = createReloader({
    initial: config, state: configState, notifier, logger: componentLogger(logger, 'reload', levels), time, summary,
    parts: {
      southbound, cloudSide, reporter, commands, commandLog, settleMs: gateway.cloud.drainMs,
      setLogLevel: (level) => { logger.level = level; },
      retiring: { ...retiring, linkUp: (device) => deviceLinkUp(cloudSide, device), sendMs: gateway.cloud.drainMs, time },
    },
    addressHolders: () => addressRecord.holders(),
    applied: (next) => {
      deps.secrets?.add(...configSecrets(next));
      addressRecord.update(next);
      for (const listener of reloadListeners) listener(next);
      shares.apply(next.site).catch((err: unknown) => logger.error({ err }, 'shares not applied after a reload'));
    },
  });
  current = reloader.current;
  runningSite = () => reloader.idle().then(() => reloader.current().site);

  let stopping: Promise<void> | undefined;
  const handle: GatewayHandle = {
    status,
    latestValues: (device) => reporter.latest(device),
    healthPort: health?.port,
    webPort: web?.port,
    reload: (load) => (stopping ? Promise.resolve({ outcome: 'refused', generation: configState.status().generation, problems: [{ path: 'reload', message: 'fieldgate is stopping' }] }) : reloader.reload(load)),
    // Without a store (no seed file given, or its state directory not writable) the seed is reloaded as it is.
    reloadSite: () => (siteChanges ? siteChanges.reloadSeed() : handle.reload(() => (deps.siteFile === undefined
      ? { issues: [{ path: 'reload', message: 'fieldgate runs without a site file' }] } : readSiteFile(deps.siteFile, deps.env)))).catch((err: unknown) => {
      // A fault of ours (a SIGHUP's reload is not awaited by anyone): said once, the running site stays.
      logger.error({ err }, 'site file reload failed unexpectedly: nothing changed');
      return { outcome: 'failed' as const, generation: configState.status().generation, problems: [{ path: 'reload', message: String(err) }] };
    }),
    stop() {
      stopping ??= (async () => {
        // A window still open stays open on disk: the next start rolls its generation back.
        siteChanges?.stop();
        await reloader.idle();
        stopTicker();
        notifier.stopping('stopping: draining outbox');
        logger.info('gateway stopping');
        await shares.stop();
        await southbound.stop();
        outbox.flush();
        await drainOutbox(outbox, () => links().some((l) => l.state === 'up'), gateway.cloud.drainMs, time);
        queue.close();
        selfDevice?.stop();
        await Promise.all([...sessions.values()].map((s) => s.stop()));
        await identitySession?.stop();
        await Promise.all(cloudSide.relays().map((r) => r.stop()));
        await health?.close();
        await web?.close();
        outbox.close();
        addressRecord.stop();
        configState.remove();
        notifier.close();
        logger.info('gateway stopped');
      })();
      return stopping;
    },
  };
  return handle;
}
