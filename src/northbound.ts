// The cloud side of a site: credentials, the rate-aware HTTP queue, and one DeviceSession per
// field device that has a `cloud` block; plus the stream relays of every device.
import type { SecretValues } from './core/redact.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CommandService } from './device/commands.js';
import { ProjectApiClient } from './cloud/project-api.js';
import { CredentialResolver, CredentialStore, type DeviceIdentity } from './cloud/credentials.js';
import { DeviceApiClient } from './cloud/device-api.js';
import { DeviceSession } from './device/device-session.js';
import { TokenBucket } from './cloud/forwarder.js';
import { HttpClient } from './cloud/http-client.js';
import type { ReportOutbox } from './core/outbox-types.js';
import { RateQueue } from './cloud/rate-queue.js';
import type { StreamConfig } from './core/config/command-types.js';
import type { CloudSettings, DeviceConfig, SiteConfig } from './core/config/site-types.js';
import type { LevelWithSilent } from 'pino';
import { componentLogger, type Logger } from './ops/log.js';
import { systemTimers } from './core/time.js';
import type { Reporter } from './device/reporter.js';
import { BusLineEndpoint, type RawLine } from './field/streams/bus-endpoint.js';
import type { ByteEndpoint } from './field/streams/endpoint.js';
import { SerialEndpoint } from './field/streams/serial-endpoint.js';
import { StreamRelay } from './field/streams/relay.js';
import { TcpEndpoint } from './field/streams/tcp-endpoint.js';
import type { LinkStatus, RateQueueStatus } from './ops/status.js';

export interface Northbound {
  readonly sessions: ReadonlyMap<string, DeviceSession>;
  start(): void;
  stop(): Promise<void>;
  linkStatus(): LinkStatus[];
  rateQueueStatus(): RateQueueStatus | null;
}

export interface NorthboundOptions {
  site: SiteConfig;
  cloud: CloudSettings;
  stateDir: string;
  outbox: ReportOutbox;
  reporter: Reporter;
  commands: ReadonlyMap<string, CommandService>;
  /** The southbound buses, for streams that share an RS-485 line with Modbus. */
  buses: ReadonlyMap<string, RawLine>;
  logger: Logger;
  componentLevels?: ReadonlyMap<string, LevelWithSilent>;
  /** Known secrets; fetched credentials are added (log redaction). */
  secrets?: SecretValues;
}

function identityOf(device: DeviceConfig, cloud: CloudSettings): DeviceIdentity {
  const c = device.cloud ?? { allowCreate: false };
  return {
    // A device's own project key wins; otherwise the project's (the same for every device).
    name: device.name, deviceId: c.deviceId, accessToken: c.accessToken, projectKey: c.projectKey ?? cloud.projectKey,
    deviceKey: c.deviceKey, typeKey: c.typeKey, createIfMissing: c.allowCreate,
  };
}

function createRelay(stream: StreamConfig, buses: ReadonlyMap<string, RawLine>, cloud: CloudSettings, publish: (id: string, data: Buffer) => Promise<void>, logger: Logger): StreamRelay | undefined {
  const target = stream.target;
  let endpoint: ByteEndpoint;
  if (target.kind === 'bus') {
    const bus = buses.get(target.bus);
    // The site file check makes this unreachable; a missing bus must still not crash the gateway.
    if (!bus) return void logger.error({ stream: stream.identifier, bus: target.bus }, 'stream bus not found; stream disabled');
    endpoint = new BusLineEndpoint(bus, stream);
  } else {
    endpoint = target.kind === 'serial' ? new SerialEndpoint(target) : new TcpEndpoint(target);
  }
  return new StreamRelay({ config: stream, endpoint, publish, logger, timers: systemTimers, reconnect: cloud.reconnect });
}

export async function createNorthbound(options: NorthboundOptions): Promise<Northbound> {
  const { site, cloud, logger } = options;
  const log = componentLogger(logger, 'cloud', options.componentLevels);
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
      const relay = createRelay(stream, options.buses, cloud, publish, log.child({ device: device.name }));
      if (relay) {
        streams.set(stream.identifier, relay);
        relays.push(relay);
      }
    }
    if (!device.cloud || !commands || !cloud.mqttUrl) continue;
    session = new DeviceSession({
      device, identity: identityOf(device, cloud), settings: { ...cloud, mqttUrl: cloud.mqttUrl }, resolver, outbox: options.outbox,
      reporter: options.reporter, commands, streams, deviceApi, pacer, ca, logger: log,
    });
    sessions.set(device.name, session);
  }
  return {
    sessions,
    start() {
      for (const relay of relays) relay.start();
      for (const session of sessions.values()) session.start();
    },
    async stop() {
      queue.close();
      await Promise.all([...sessions.values()].map((s) => s.stop()));
      await Promise.all(relays.map((r) => r.stop()));
    },
    linkStatus() {
      return [...sessions.entries()].map(([device, s]) => ({
        device, state: s.linkState(), reconnects: s.reconnectCount, publishes: s.forwarder.stats().acked,
      }));
    },
    rateQueueStatus() {
      const s = queue.stats();
      return { pending: s.pending, rateLimited: s.rateLimited, waits: s.waits, rejected: s.rejected };
    },
  };
}
