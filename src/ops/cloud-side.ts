// The cloud side of a running gateway: credentials, the rate-aware HTTP queue, one DeviceSession
// per device with a `cloud` block (its own link, or a sub-device of fieldgate's identity), and
// every stream relay. Built at start; a reload adds and removes one device's parts at a time.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CredentialResolver, CredentialStore, deviceIdentity } from '../cloud/credentials/credentials.js';
import { DeviceApiClient } from '../cloud/http/device-api.js';
import { TokenBucket } from '../cloud/forwarding/forwarder.js';
import { HttpClient } from '../cloud/http/http-client.js';
import { ProjectApiClient } from '../cloud/http/project-api.js';
import { RateQueue } from '../cloud/http/rate-queue.js';
import { subDevicesOf } from '../core/config/gateway-mode.js';
import type { CloudSettings, DeviceConfig, SiteConfig } from '../core/config/site-types.js';
import type { ReportOutbox } from '../core/outbox-types.js';
import type { SecretValues } from '../core/redact.js';
import type { CommandService } from '../device/commands.js';
import { DeviceSession } from '../device/device-session.js';
import type { InboundDispatch } from '../device/inbound-dispatch.js';
import type { GatewaySession } from '../device/gateway-session.js';
import { createGatewaySession, IDENTITY_NAME } from '../device/gateway-wiring.js';
import type { Reporter } from '../device/reporter.js';
import type { RawLine } from '../field/streams/bus-endpoint.js';
import type { StreamRelay } from '../field/streams/relay.js';
import { createStreamRelay } from '../field/streams/relay-factory.js';
import type { Logger } from './log.js';
import type { LinkStatus, RateQueueStatus } from './status.js';

export interface CloudSideOptions {
  site: SiteConfig;
  cloud: CloudSettings;
  stateDir: string;
  outbox: ReportOutbox;
  reporter: Reporter;
  commands: ReadonlyMap<string, CommandService>;
  /** The southbound buses, for streams that share an RS-485 line with Modbus (read when a device is added). */
  buses: ReadonlyMap<string, RawLine>;
  log: Logger;
  secrets?: SecretValues;
}

export interface CloudSide {
  readonly sessions: ReadonlyMap<string, DeviceSession>;
  /** fieldgate's own identity, carrying the sub-devices (gateway mode). */
  readonly gateway: GatewaySession | undefined;
  /** Devices whose session has no link of its own. */
  readonly subDevices: ReadonlySet<string>;
  readonly queue: RateQueue;
  /** Starts every relay and session built so far. */
  start(): void;
  /** A device's relays and session, started at once (`site`: the config it belongs to, for its sub-device address). */
  addDevice(device: DeviceConfig, commands: CommandService | undefined, site: SiteConfig): void;
  /**
   * A device's session and relays stopped: its link closes after what it had in flight was
   * acknowledged (up to `settleMs`); its other queued reports stay in the outbox.
   */
  removeDevice(name: string, settleMs: number, replacing: boolean): Promise<void>;
  /**
   * A device replaced by a reload that keeps its cloud identity: its session (link, forwarder,
   * place on the identity's link) stays; inbound messages are held and its old parts fenced
   * (DeviceSession.suspend), its relays stop.
   */
  suspendDevice(name: string, settleMs: number): Promise<void>;
  /** The suspended device's replacement takes over its session; new relays start. */
  resumeDevice(device: DeviceConfig, commands: CommandService | undefined): void;
  relays(): StreamRelay[];
  /** The cloud's stored attributes of a device (interface B, through the rate queue): the commissioning page's cloud view. */
  cloudAttributes(device: DeviceConfig, keys: readonly string[]): Promise<Record<string, unknown>>;
}

/** Credentials, the rate-aware HTTP queue, one DeviceSession per device with a `cloud` block, and every stream relay. */
export async function createCloudSide(options: CloudSideOptions): Promise<CloudSide> {
  const { cloud, log } = options;
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
  const relaysOf = new Map<string, StreamRelay[]>();
  const subDevices = new Set<string>();
  /** A replaced session's held inbound messages, until its replacement (same name) takes them over. */
  const handovers = new Map<string, { dispatch: InboundDispatch; from: DeviceSession }>();
  let started = false;

  /** A device's relays, not started; they publish through its session of the moment. */
  const buildRelays = (device: DeviceConfig): Map<string, StreamRelay> => {
    const streams = new Map<string, StreamRelay>();
    const publish = async (id: string, data: Buffer): Promise<void> => {
      const session = sessions.get(device.name);
      if (!session) throw new Error(`device ${device.name} has no cloud link`);
      await session.publishStream(id, data);
    };
    for (const stream of device.streams) {
      const relay = createStreamRelay(stream, options.buses, cloud.reconnect, publish, log.child({ device: device.name }));
      if (relay) streams.set(stream.identifier, relay);
    }
    relaysOf.set(device.name, [...streams.values()]);
    return streams;
  };

  /** Relays and session of one device, not started. */
  const build = (device: DeviceConfig, commands: CommandService | undefined): void => {
    const streams = buildRelays(device);
    // Taken over now or never: messages held for a device that comes back without a cloud side are dropped.
    const handover = handovers.get(device.name);
    handovers.delete(device.name);
    if (!device.cloud || !commands || !cloud.mqttUrl) return;
    const session = new DeviceSession({
      device, identity: deviceIdentity(device, cloud), settings: { ...cloud, mqttUrl: cloud.mqttUrl }, resolver, outbox: options.outbox,
      reporter: options.reporter, commands, streams, deviceApi, pacer, ca, logger: log, ...(handover ? { handover: handover.dispatch } : {}),
    });
    handover?.from.replyThrough(session);
    sessions.set(device.name, session);
  };

  const startDevice = (name: string): void => {
    for (const relay of relaysOf.get(name) ?? []) relay.start();
    const session = sessions.get(name);
    if (!session) return;
    if (subDevices.has(name)) session.startWithoutLink();
    else session.start();
  };

  for (const device of options.site.devices) build(device, options.commands.get(device.name));
  const wiring = cloud.mqttUrl
    ? createGatewaySession({ site: options.site, cloud: { ...cloud, mqttUrl: cloud.mqttUrl }, sessions, resolver, outbox: options.outbox, presence: options.reporter, pacer, ca, log })
    : { session: undefined, subDevices: new Set<string>() };
  for (const name of wiring.subDevices) subDevices.add(name);
  const gateway = wiring.session;

  return {
    sessions, gateway, subDevices, queue,
    relays: () => [...relaysOf.values()].flat(),
    async cloudAttributes(device, keys) {
      if (!deviceApi) throw new Error('gateway.cloud.apiBaseUrl is not set');
      if (!device.cloud) throw new Error(`device "${device.name}" has no cloud block`);
      const credential = await resolver.resolve(deviceIdentity(device, cloud));
      return deviceApi.readAttributes({ accessToken: credential.accessToken, projectKey: credential.projectKey }, keys);
    },
    start() {
      started = true;
      for (const name of relaysOf.keys()) startDevice(name);
      gateway?.start();
    },
    addDevice(device, commands, site) {
      build(device, commands);
      const session = sessions.get(device.name);
      const sub = gateway && session ? subDevicesOf(site, cloud).find((s) => s.device.name === device.name) : undefined;
      if (gateway && session && sub) {
        subDevices.add(device.name);
        gateway.addSubDevice({
          name: device.name, address: sub.address, accept: session.accept.bind(session),
          onLinkUp: (reconnect: boolean) => void session.sync(reconnect ? 'reconnect' : 'start'),
        });
      }
      if (started) startDevice(device.name);
    },
    async removeDevice(name, settleMs, replacing) {
      const session = sessions.get(name);
      sessions.delete(name);
      const relays = relaysOf.get(name) ?? [];
      relaysOf.delete(name);
      // A replacement on another link takes over what this one received (drained before it closes).
      const handingOver = session && replacing ? session.handOver(settleMs) : undefined;
      if (subDevices.delete(name)) gateway?.removeSubDevice(name, !replacing);
      else if (session) await session.forwarder.quiesce(settleMs);
      if (session && handingOver) handovers.set(name, { dispatch: await handingOver, from: session });
      // Drained again at the close: the link may have come up while the device was handed over.
      await session?.stop(handingOver ? settleMs : 0);
      await Promise.all(relays.map((r) => r.stop()));
    },
    async suspendDevice(name, settleMs) {
      const relays = relaysOf.get(name) ?? [];
      relaysOf.delete(name);
      await sessions.get(name)?.suspend(settleMs);
      await Promise.all(relays.map((r) => r.stop()));
    },
    resumeDevice(device, commands) {
      const session = sessions.get(device.name);
      if (session && !commands) throw new Error(`device "${device.name}" has no command path (its bus "${device.bus}" does not run)`);
      const streams = buildRelays(device);
      if (session && commands) session.resume({ device, commands, streams });
      if (started) for (const relay of streams.values()) relay.start();
    },
  };
}

export function linkStatusOf({ sessions, gateway, subDevices }: CloudSide): LinkStatus[] {
  const own = [...sessions.entries()].filter(([device]) => !subDevices.has(device))
    .map(([device, s]) => ({ device, state: s.linkState(), reconnects: s.reconnectCount, publishes: s.forwarder.stats().acked }));
  return gateway ? [...own, { device: IDENTITY_NAME, state: gateway.linkState(), reconnects: gateway.reconnectCount, publishes: gateway.forwarder.stats().acked }] : own;
}

export function rateQueueStatusOf(queue: RateQueue): RateQueueStatus {
  const s = queue.stats();
  return { pending: s.pending, rateLimited: s.rateLimited, waits: s.waits, rejected: s.rejected };
}
