// The composition root: every part of a running gateway is built here from the compiled site and
// wired by constructors. No policy lives here: status assembly, watchdog thresholds and the
// periodic tick are in ops/ (status-assembly.ts, supervision.ts). Readiness never waits on the network.
import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LevelWithSilent } from 'pino';
import { ProjectApiClient } from './cloud/project-api.js';
import { CredentialResolver, CredentialStore, deviceIdentity } from './cloud/credentials.js';
import { DeviceApiClient } from './cloud/device-api.js';
import { TokenBucket } from './cloud/forwarder.js';
import { HttpClient } from './cloud/http-client.js';
import { RateQueue } from './cloud/rate-queue.js';
import type { CompiledSite } from './core/config/compile.js';
import type { Config } from './core/config/config.js';
import type { BusConfig, SiteConfig } from './core/config/site-types.js';
import type { SecretValues } from './core/redact.js';
import { systemTime, systemTimers } from './core/time.js';
import { createSelfDevice } from './ops/self/wiring.js';
import { CommandService } from './device/commands.js';
import { BusDeviceIo } from './device/device-io.js';
import { DeviceSession } from './device/device-session.js';
import type { GatewaySession } from './device/gateway-session.js';
import { createGatewaySession, IDENTITY_NAME } from './device/gateway-wiring.js';
import { Poller, type SampleSink } from './device/poller.js';
import { Reporter } from './device/reporter.js';
import { Bus } from './field/modbus/bus.js';
import { createModbusTransport } from './field/modbus/transport.js';
import type { RawLine } from './field/streams/bus-endpoint.js';
import type { StreamRelay } from './field/streams/relay.js';
import { createStreamRelay } from './field/streams/relay-factory.js';
import type { GatewayDeps, GatewayHandle } from './ops/gateway-handle.js';
import { openGatewayOutbox } from './ops/gateway-outbox.js';
import { startHealthServer, type HealthServer } from './ops/health.js';
import { componentLogger, type Logger } from './ops/log.js';
import { assembleStatus, busStatusOf, statusSummary } from './ops/status-assembly.js';
import type { GatewayStatus, LinkStatus, RateQueueStatus } from './ops/status.js';
import { drainOutbox, siteProgress, startSupervisionTicker } from './ops/supervision.js';
import { createNotifier, watchdogIntervalMs } from './ops/systemd.js';
import { ProgressWatch } from './ops/watchdog.js';
import type { ReportOutbox } from './core/outbox-types.js';
import type { CloudSettings } from './core/config/site-types.js';

export type { GatewayDeps, GatewayHandle } from './ops/gateway-handle.js';

export interface Southbound {
  readonly buses: ReadonlyMap<string, Bus>;
  readonly pollers: ReadonlyMap<string, Poller>;
  /** Bus kinds by name, for status. */
  readonly kinds: ReadonlyMap<string, BusConfig['kind']>;
  start(): void;
  /** Pollers first, then the buses they use. */
  stop(): Promise<void>;
}

/** One Bus per line, one Poller per bus with that bus's devices. `cloudShare`: share of each bus's time cloud work may take while polls wait. */
export function createSouthbound(
  site: SiteConfig, compiled: CompiledSite, sink: SampleSink, logger: Logger, levels?: ReadonlyMap<string, LevelWithSilent>, cloudShare = 1,
): Southbound {
  const busLog = componentLogger(logger, 'bus', levels);
  const pollLog = componentLogger(logger, 'poller', levels);
  const buses = new Map<string, Bus>();
  const pollers = new Map<string, Poller>();
  const kinds = new Map<string, BusConfig['kind']>();
  for (const config of site.buses) {
    const concurrentUnits = new Set(site.devices.filter((d) => d.bus === config.name && d.limits.concurrent).map((d) => d.unitId));
    const bus = new Bus({ config, transportFactory: createModbusTransport, logger: busLog, highShare: cloudShare, concurrentUnits });
    buses.set(config.name, bus);
    kinds.set(config.name, config.kind);
    const devices = compiled.devices.filter((d) => d.config.bus === config.name);
    if (devices.length > 0) pollers.set(config.name, new Poller({ bus, devices, sink, logger: pollLog.child({ bus: config.name }) }));
  }
  return {
    buses, pollers, kinds,
    start() {
      for (const bus of buses.values()) bus.start();
      for (const poller of pollers.values()) poller.start();
    },
    async stop() {
      await Promise.all([...pollers.values()].map((p) => p.stop()));
      await Promise.all([...buses.values()].map((b) => b.stop()));
    },
  };
}

/** Per device: the command path of that device, planning its reads with what its poller learned. */
export function createCommandServices(compiled: CompiledSite, southbound: Southbound, logger: Logger): Map<string, CommandService> {
  const commands = new Map<string, CommandService>();
  for (const device of compiled.devices) {
    const { config } = device;
    const bus = southbound.buses.get(config.bus);
    if (!bus) continue;
    const learned = () => southbound.pollers.get(config.bus)?.readLimits(config.name) ?? {};
    commands.set(config.name, new CommandService(device, config.commands, new BusDeviceIo(bus, config, systemTimers), logger, learned));
  }
  return commands;
}

interface CloudSideOptions {
  site: SiteConfig;
  cloud: CloudSettings;
  stateDir: string;
  outbox: ReportOutbox;
  reporter: Reporter;
  commands: ReadonlyMap<string, CommandService>;
  /** The southbound buses, for streams that share an RS-485 line with Modbus. */
  buses: ReadonlyMap<string, RawLine>;
  log: Logger;
  secrets?: SecretValues;
}

interface CloudSide {
  readonly sessions: ReadonlyMap<string, DeviceSession>;
  /** fieldgate's own identity, carrying the sub-devices (gateway mode). */
  readonly gateway: GatewaySession | undefined;
  /** Devices whose session has no link of its own. */
  readonly subDevices: ReadonlySet<string>;
  readonly relays: readonly StreamRelay[];
  readonly queue: RateQueue;
}

/** Credentials, the rate-aware HTTP queue, one DeviceSession per device with a `cloud` block, and every stream relay. */
async function createCloudSide(options: CloudSideOptions): Promise<CloudSide> {
  const { site, cloud, log } = options;
  const queue = new RateQueue({
    concurrency: cloud.rateQueue.concurrency, intervalCap: cloud.rateQueue.ratePerS, intervalMs: 1000,
    maxPending: cloud.rateQueue.maxPending, attempts: cloud.rateQueue.retries + 1, backoff: cloud.reconnect,
    max429Retries: 5, lowRemaining: 2,
  });
  const ca = cloud.caFile ? await readFile(cloud.caFile) : undefined;
  const http = new HttpClient({ timeoutMs: cloud.httpTimeoutMs, onRateInfo: (info) => queue.observe(info), ...(ca ? { ca } : {}), ...(options.secrets ? { secrets: options.secrets } : {}) });
  const projectApi = cloud.apiBaseUrl && cloud.appId && cloud.accessKey && cloud.secretKey
    ? new ProjectApiClient({ baseUrl: cloud.apiBaseUrl, appId: cloud.appId, accessKey: cloud.accessKey, secretKey: cloud.secretKey, http, queue, log, tokenErrorCodes: [401] })
    : undefined;
  const deviceApi = cloud.apiBaseUrl ? new DeviceApiClient({ baseUrl: cloud.apiBaseUrl, http, queue }) : undefined;
  const store = new CredentialStore(join(options.stateDir, 'credentials.json'));
  const { skipped } = await store.load();
  if (skipped.length > 0) log.warn({ skipped }, 'credential store entries skipped');
  const resolver = new CredentialResolver({
    store, log, ...(projectApi ? { projectApi } : {}), ...(options.secrets ? { secrets: options.secrets } : {}), ...(deviceApi ? { deviceKeyApi: deviceApi } : {}),
    ...(cloud.projectKey ? { projectKey: cloud.projectKey } : {}),
  });
  // One bucket for every device: a replayed backlog must not flood the cloud.
  const pacer = new TokenBucket(Math.max(1, cloud.replayRatePerS), Math.max(1, cloud.publishWindow));
  const sessions = new Map<string, DeviceSession>();
  const relays: StreamRelay[] = [];
  for (const device of site.devices) {
    const commands = options.commands.get(device.name);
    const streams = new Map<string, StreamRelay>();
    let session: DeviceSession | undefined;
    const publish = async (id: string, data: Buffer): Promise<void> => {
      if (!session) throw new Error(`device ${device.name} has no cloud link`);
      await session.publishStream(id, data);
    };
    for (const stream of device.streams) {
      const relay = createStreamRelay(stream, options.buses, cloud.reconnect, publish, log.child({ device: device.name }));
      if (relay) {
        streams.set(stream.identifier, relay);
        relays.push(relay);
      }
    }
    if (!device.cloud || !commands || !cloud.mqttUrl) continue;
    session = new DeviceSession({
      device, identity: deviceIdentity(device, cloud), settings: { ...cloud, mqttUrl: cloud.mqttUrl }, resolver, outbox: options.outbox,
      reporter: options.reporter, commands, streams, deviceApi, pacer, ca, logger: log,
    });
    sessions.set(device.name, session);
  }
  const gateway = cloud.mqttUrl
    ? createGatewaySession({ site, cloud: { ...cloud, mqttUrl: cloud.mqttUrl }, sessions, resolver, outbox: options.outbox, presence: options.reporter, pacer, ca, log })
    : { session: undefined, subDevices: new Set<string>() };
  return { sessions, relays, queue, gateway: gateway.session, subDevices: gateway.subDevices };
}

function linkStatusOf({ sessions, gateway, subDevices }: CloudSide): LinkStatus[] {
  const own = [...sessions.entries()].filter(([device]) => !subDevices.has(device))
    .map(([device, s]) => ({ device, state: s.linkState(), reconnects: s.reconnectCount, publishes: s.forwarder.stats().acked }));
  return gateway ? [...own, { device: IDENTITY_NAME, state: gateway.linkState(), reconnects: gateway.reconnectCount, publishes: gateway.forwarder.stats().acked }] : own;
}

function rateQueueStatusOf(queue: RateQueue): RateQueueStatus {
  const s = queue.stats();
  return { pending: s.pending, rateLimited: s.rateLimited, waits: s.waits, rejected: s.rejected };
}

export async function startGateway(config: Config, deps: GatewayDeps): Promise<GatewayHandle> {
  const { site, gateway } = config;
  const { logger, componentLevels: levels } = deps;
  const time = deps.time ?? systemTime;
  const notifier = deps.notifier ?? createNotifier(deps.env, logger);
  const startedAt = time.now();
  mkdirSync(gateway.stateDir, { recursive: true, mode: 0o700 });

  // The outbox wakes the sessions of devices whose reports became sendable; sessions exist later.
  let wakeSessions: (devices: ReadonlySet<string>) => void = () => undefined;
  const store = openGatewayOutbox(gateway.stateDir, gateway.cloud, logger, (devices) => wakeSessions(devices));
  const outbox = store.outbox;
  const reporter = new Reporter(site.devices, outbox, componentLogger(logger, 'reporter', levels));
  const southbound = createSouthbound(site, config.compiled, reporter, logger, levels, gateway.cloud.inbound.busShare);
  const commands = createCommandServices(config.compiled, southbound, componentLogger(logger, 'commands', levels));
  const cloudSide = await createCloudSide({
    site, cloud: gateway.cloud, stateDir: gateway.stateDir, outbox, reporter, commands, buses: southbound.buses,
    log: componentLogger(logger, 'cloud', levels), ...(deps.secrets ? { secrets: deps.secrets } : {}),
  });
  const { sessions, relays, queue, gateway: identitySession, subDevices } = cloudSide;
  wakeSessions = (devices) => {
    for (const device of devices) if (!identitySession?.notify(device)) sessions.get(device)?.notify();
  };
  const links = () => linkStatusOf(cloudSide);

  const status = (): GatewayStatus => assembleStatus({
    startedAt, devices: site.devices,
    pollStats: () => [...southbound.pollers.values()].flatMap((p) => p.stats()),
    busStatus: (uptimeMs) => [...southbound.buses.values()].map((b) => busStatusOf(b.stats(), southbound.kinds.get(b.name) ?? 'rtu', uptimeMs)),
    lastSampleAt: (device) => reporter.lastSampleAt(device),
    isOnline: (device) => reporter.isOnline(device),
    links, outbox: (now) => store.status(now),
    rateQueue: () => (sessions.size > 0 ? rateQueueStatusOf(queue) : null),
  }, time.now());

  const selfDevice = identitySession ? createSelfDevice(identitySession.link, config, { ...southbound, status }, logger, time) : undefined;

  southbound.start();
  for (const relay of relays) relay.start();
  for (const [device, session] of sessions) if (subDevices.has(device)) session.startWithoutLink(); else session.start();
  identitySession?.start();
  selfDevice?.start();

  const progress = new ProgressWatch(siteProgress(site, { pollers: southbound.pollers, buses: southbound.buses.values(), links, outbox, keepaliveS: gateway.cloud.keepaliveS }));
  let health: HealthServer | undefined;
  if (gateway.health.enabled) {
    try {
      health = await startHealthServer({ port: gateway.health.port, snapshot: status, stalledLoops: () => progress.stalled(time.now()), logger: componentLogger(logger, 'health', levels) });
    } catch (err) {
      logger.error({ err, port: gateway.health.port }, 'health endpoint could not start; continuing without it');
    }
  }
  notifier.ready(`polling ${site.devices.length} devices on ${site.buses.length} buses`);
  logger.info({ devices: site.devices.length, buses: site.buses.length, links: sessions.size, healthPort: health?.port }, 'gateway started');
  const stopTicker = startSupervisionTicker({
    notifier, store, maxOutboxBytes: gateway.cloud.outbox.maxBytes, stalled: (now) => progress.stalled(now),
    summary: () => statusSummary(status()), links, rateLimited: () => queue.stats().rateLimited, logger, time,
    intervalMs: Math.min(watchdogIntervalMs(deps.env, process.pid) ?? 5_000, 5_000),
  });

  let stopping: Promise<void> | undefined;
  return {
    status,
    latestValues: (device) => reporter.latest(device),
    healthPort: health?.port,
    stop() {
      stopping ??= (async () => {
        stopTicker();
        notifier.stopping('stopping: draining outbox');
        logger.info('gateway stopping');
        await southbound.stop();
        outbox.flush();
        await drainOutbox(outbox, () => links().some((l) => l.state === 'up'), gateway.cloud.drainMs, time);
        queue.close();
        selfDevice?.stop();
        await Promise.all([...sessions.values()].map((s) => s.stop()));
        await identitySession?.stop();
        await Promise.all(relays.map((r) => r.stop()));
        await health?.close();
        outbox.close();
        notifier.close();
        logger.info('gateway stopped');
      })();
      return stopping;
    },
  };
}
