// Everything cloud-side of one field device: its MQTT link, the forwarder draining its outbox,
// inbound pushes/commands/stream data, and the interface-B read of its writable points.
import { COMMAND_ERRORS, type CommandService } from './commands.js';
import { firstNames } from '../core/device-write-types.js';
import type { CloudSettings, DeviceConfig } from '../core/config/site-types.js';
import type { Logger } from '../ops/log.js';
import type { Reporter } from './reporter.js';
import type { StreamRelay } from '../field/streams/relay.js';
import type { CredentialResolver, DeviceIdentity, ResolvedCredential } from '../cloud/credentials.js';
import type { DeviceApi } from '../cloud/device-api.js';
import { Forwarder, type Pacer } from '../cloud/forwarder.js';
import { MqttLink } from '../cloud/link.js';
import type { ReportOutbox } from '../cloud/outbox-types.js';
import { commandReply, dataTopic, parseInbound, type Inbound } from '../cloud/topics.js';
import { repeatEvery, systemTime, type Time } from '../core/time.js';

/** Answers one command the way it came (the device's own link or its gateway's). */
export type Replier = (command: { id: number; method: string }, result: Parameters<typeof commandReply>[1]) => void;

export interface DeviceSessionOptions {
  device: DeviceConfig;
  identity: DeviceIdentity;
  settings: CloudSettings & { mqttUrl: string };
  resolver: CredentialResolver;
  outbox: ReportOutbox;
  reporter: Reporter;
  commands: CommandService;
  streams: ReadonlyMap<string, StreamRelay>;
  deviceApi: DeviceApi | undefined;
  pacer: Pacer;
  ca: Buffer | undefined;
  logger: Logger;
  /** Clock and timers of the link, forwarder and periodic sync; the system's by default. */
  time?: Time;
}

export class DeviceSession {
  readonly link: MqttLink;
  readonly forwarder: Forwarder;
  private credential: ResolvedCredential | undefined;
  private reconnects = 0;
  private ups = 0;
  private inboundPending = 0;
  /** Messages refused since the pending limit was last reached (logged once per episode). */
  private refusedInEpisode = 0;
  /** Known points of pushes refused while busy: read back once the episode ends. */
  private readonly uncorrected = new Set<string>();
  private cancelSync: (() => void) | undefined;
  private readonly time: Time;
  private readonly log: Logger;
  private readonly streamIds: Set<string>;
  readonly counters = { pushes: 0, commands: 0, invalid: 0, refused: 0, syncs: 0, syncFailures: 0 };

  constructor(private readonly options: DeviceSessionOptions) {
    const { device, settings } = options;
    this.time = options.time ?? systemTime;
    this.log = options.logger.child({ device: device.name });
    this.streamIds = new Set(device.streams.map((s) => s.identifier));
    this.link = new MqttLink({
      name: device.name,
      url: settings.mqttUrl,
      credentials: async () => {
        const credential = await options.resolver.resolve(options.identity);
        this.credential = credential;
        return { clientId: credential.deviceId, username: credential.accessToken, password: credential.projectKey };
      },
      streams: [...this.streamIds],
      keepaliveS: settings.keepaliveS,
      connectTimeoutMs: settings.connectTimeoutMs,
      reconnect: settings.reconnect,
      ...(options.ca ? { ca: options.ca } : {}),
      // The link names the device in its own log fields.
      log: options.logger,
      time: this.time,
    });
    this.forwarder = new Forwarder({
      device: device.name, outbox: options.outbox, link: this.link, log: this.log,
      window: settings.publishWindow, pacer: options.pacer, time: this.time,
    });
    this.link.onMessage((topic, payload) => this.receive(topic, payload));
    this.link.onEvent((event) => {
      if (event.type === 'up') {
        this.ups += 1;
        if (this.ups > 1) this.reconnects += 1;
        options.reporter.snapshotNext(device.name);
        void this.sync(this.ups > 1 ? 'reconnect' : 'start');
      } else if (event.type === 'auth-refused') {
        void options.resolver.invalidate(options.identity).catch((err: unknown) => this.log.warn({ err }, 'credential invalidation failed'));
      }
    });
  }

  start(): void {
    this.link.start();
    this.forwarder.start();
    if (this.options.settings.syncPeriodMs > 0 && this.options.deviceApi) {
      this.cancelSync = repeatEvery(this.time, this.options.settings.syncPeriodMs, () => void this.sync('period'), { unref: true });
    }
  }

  async stop(): Promise<void> {
    this.cancelSync?.();
    this.cancelSync = undefined;
    this.forwarder.stop();
    await this.link.stop();
  }

  get reconnectCount(): number {
    return this.reconnects;
  }

  /** Wakes the forwarder after new outbox records were committed. */
  notify(): void {
    this.forwarder.notify();
  }

  /** Reads the cloud's values of the writable points (interface B) and applies them like pushes. */
  async sync(reason: string): Promise<void> {
    const api = this.options.deviceApi;
    const keys = this.options.device.points.filter((p) => p.writable).map((p) => p.id);
    if (!api || keys.length === 0) return;
    try {
      // A sub-device has no link that fetched its credential: the credential service has it.
      const credential = this.credential ?? await this.options.resolver.resolve(this.options.identity);
      const values = await api.readAttributes({ accessToken: credential.accessToken, projectKey: credential.projectKey }, keys);
      this.counters.syncs += 1;
      // Only values the device does not already hold: a periodic sync must not rewrite registers.
      const held = this.options.reporter.latest(this.options.device.name);
      const known = Object.fromEntries(Object.entries(values).filter(([k, v]) => keys.includes(k) && held[k] !== v));
      if (Object.keys(known).length === 0) return;
      await this.applyAttributes(known, `sync:${reason}`);
    } catch (err) {
      this.counters.syncFailures += 1;
      this.log.warn({ reason, err }, 'cloud attribute read failed');
    }
  }

  private receive(topic: string, payload: Buffer): void {
    const { maxInboundBytes, inbound: limits } = this.options.settings;
    const inbound = parseInbound(topic, payload, { streams: this.streamIds, maxPayloadBytes: maxInboundBytes, maxKeys: limits.maxKeys });
    this.accept(inbound, (command, result) => this.reply(command, result));
  }

  /** One parsed message, from this device's link or a gateway's; `reply` answers a command the way it came. */
  accept(inbound: Inbound, reply: Replier): void {
    const topic = inbound.kind === 'invalid' ? inbound.topic : inbound.kind;
    const limit = this.options.settings.inbound.maxPending;
    if (this.inboundPending >= limit) {
      this.refuseBusy(inbound, topic, limit, reply);
      return;
    }
    this.track(this.handle(inbound, reply), topic);
  }

  /** Gateway mode: no link of its own, only the periodic interface-B sync. */
  startWithoutLink(): void {
    if (this.options.settings.syncPeriodMs > 0 && this.options.deviceApi) {
      this.cancelSync = repeatEvery(this.time, this.options.settings.syncPeriodMs, () => void this.sync('period'), { unref: true });
    }
  }

  /** Over the pending limit: every command (malformed ones too) is answered busy at once. */
  private refuseBusy(inbound: Inbound, topic: string, limit: number, reply: Replier): void {
    this.counters.refused += 1;
    if (this.refusedInEpisode === 0) this.log.warn({ topic, pending: this.inboundPending, limit }, 'inbound messages refused: too many pending');
    this.refusedInEpisode += 1;
    const command = inbound.kind === 'command' ? inbound : inbound.kind === 'invalid' ? inbound.command : undefined;
    if (command) reply(command, { error: { code: COMMAND_ERRORS.busy, message: `gateway busy: more than ${limit} messages pending for this device` } });
    const pushed = inbound.kind === 'attributes-push' ? Object.keys(inbound.attributes) : inbound.kind === 'invalid' ? inbound.pushKeys : undefined;
    for (const id of pushed ?? []) if (this.options.commands.knows(id)) this.uncorrected.add(id);
  }

  private settle(): void {
    this.inboundPending -= 1;
    if (this.refusedInEpisode > 0 && this.inboundPending === 0) {
      this.log.info({ refused: this.refusedInEpisode }, 'inbound messages accepted again');
      this.refusedInEpisode = 0;
      if (this.uncorrected.size > 0) this.track(this.correct([...this.uncorrected], 'pushes refused while busy'));
      this.uncorrected.clear();
    }
  }

  private track(work: Promise<void>, topic?: string): void {
    this.inboundPending += 1;
    work.catch((err: unknown) => this.log.error({ topic, err }, 'inbound message failed')).finally(() => this.settle());
  }

  /**
   * The cloud stored the values of a push the device never took: report the device's real values
   * of those points (past the change filter), with one log line saying why.
   */
  private async correct(ids: readonly string[], reason: string): Promise<void> {
    const read = await this.options.commands.readBack(ids);
    const points = Object.keys(read.values);
    if (points.length > 0) this.options.reporter.onConfirmedValues(this.options.device.name, read.values);
    const unread = Object.keys(read.failed);
    this.log.warn({ reason, corrected: points.length, points: firstNames(points), ...(unread.length > 0 ? { unread: firstNames(unread) } : {}) }, 'cloud values corrected from device');
  }

  private async handle(inbound: Inbound, reply: Replier): Promise<void> {
    switch (inbound.kind) {
      case 'attributes-push':
        this.counters.pushes += 1;
        await this.applyAttributes(inbound.attributes, 'push');
        return;
      case 'command': {
        this.counters.commands += 1;
        const outcome = await this.options.commands.runCommand(inbound.method, inbound.params);
        reply(inbound, outcome.ok ? { params: outcome.result } : { error: outcome.error });
        return;
      }
      case 'data-set': {
        const relay = this.options.streams.get(inbound.identifier);
        if (!relay) return void this.log.warn({ stream: inbound.identifier }, 'data for an unconfigured stream dropped');
        await relay.send(inbound.bytes).catch((err: unknown) => this.log.warn({ stream: inbound.identifier, err }, 'stream data not delivered'));
        return;
      }
      case 'attributes-get-response':
        return;
      case 'invalid':
        this.counters.invalid += 1;
        this.log.warn({ topic: inbound.topic, reason: inbound.reason }, 'invalid inbound message');
        if (inbound.command) reply(inbound.command, { error: { code: COMMAND_ERRORS.badParams, message: inbound.reason } });
        if (inbound.pushKeys) {
          const known = inbound.pushKeys.filter((id) => this.options.commands.knows(id));
          if (known.length > 0) await this.correct(known, 'push refused: too many keys');
        }
        return;
    }
  }

  private async applyAttributes(values: Record<string, unknown>, source: string): Promise<void> {
    const result = await this.options.commands.applyAttributes(values, source);
    // Corrected values bypass the change filter: the cloud holds the pushed value, not the old one.
    const confirmed = { ...result.applied, ...result.corrected };
    if (Object.keys(confirmed).length > 0) this.options.reporter.onConfirmedValues(this.options.device.name, confirmed);
  }

  private reply(command: { id: number; method: string }, result: Parameters<typeof commandReply>[1]): void {
    const message = commandReply(command, result);
    this.link.publish(message.topic, message.payload).catch((err: unknown) => this.log.warn({ id: command.id, err }, 'command reply not delivered'));
  }

  /** Publishes bytes from a stream target on `data/<identifier>` (live data: not through the outbox). */
  publishStream(identifier: string, data: Buffer): Promise<void> {
    return this.link.publish(dataTopic(identifier), data);
  }

  linkState(): 'up' | 'down' {
    return this.link.isUp ? 'up' : 'down';
  }
}
