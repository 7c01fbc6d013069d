// Everything cloud-side of one field device, wired together: its MQTT link, the forwarder
// draining its outbox, inbound messages handed to the inbound dispatch, and the interface-B sync.
// A reload that replaces the device but not its cloud identity keeps the session (link, forwarder)
// and swaps the device's parts: `suspend` holds its inbound messages and fences the old parts,
// `resume` hands the held messages to the new ones. One that replaces its identity too gets a new
// session: `handOver` drains the old link into the held messages, which the new session takes
// over (its `handover` option) and runs before its own link connects.
import type { CommandService } from './commands.js';
import { CloudValues } from './cloud-values.js';
import { CloudValueSync } from './cloud-value-sync.js';
import { InboundDispatch, type CommandReplier } from './inbound-dispatch.js';
import type { CloudSettings, DeviceConfig } from '../core/config/site-types.js';
import type { Logger } from '../core/logger.js';
import type { Reporter } from './reporter.js';
import type { StreamRelay } from '../field/streams/relay.js';
import type { CredentialResolver, DeviceIdentity } from '../cloud/credentials/credentials.js';
import type { DeviceApiClient } from '../cloud/http/device-api.js';
import { Forwarder, type Pacer } from '../cloud/forwarding/forwarder.js';
import { MqttLink } from '../cloud/mqtt/link.js';
import type { ReportOutbox } from '../core/outbox-types.js';
import { commandReply, dataTopic, parseInbound, type Inbound } from '../cloud/mqtt/topics.js';
import { sleep, systemTime, type Time } from '../core/time.js';

/** Answers one command the way it came (the device's own link or its gateway's). */
export type Replier = CommandReplier;

export interface DeviceSessionOptions {
  device: DeviceConfig;
  identity: DeviceIdentity;
  settings: CloudSettings & { mqttUrl: string };
  resolver: CredentialResolver;
  outbox: ReportOutbox;
  reporter: Reporter;
  commands: CommandService;
  streams: ReadonlyMap<string, StreamRelay>;
  deviceApi: DeviceApiClient | undefined;
  pacer: Pacer;
  ca: Buffer | undefined;
  logger: Logger;
  /** Shared by several devices' sessions (or a gateway link) when given; one of its own otherwise. */
  dispatch?: InboundDispatch;
  /** Clock and timers of the link, forwarder and periodic sync; the system's by default. */
  time?: Time;
  /** The replaced session's held messages (its `handOver`): run on this session's parts at once. */
  handover?: InboundDispatch;
}

/** The parts of a session that belong to one definition of the device (swapped by a reload). */
export interface DeviceParts {
  device: DeviceConfig;
  commands: CommandService;
  streams: ReadonlyMap<string, StreamRelay>;
}

export class DeviceSession {
  readonly link: MqttLink;
  readonly forwarder: Forwarder;
  /** The interface-B sync of the device's current definition (rebuilt by `resume`); absent without interface B. */
  private currentSync: CloudValueSync | undefined;
  /** Writes not from a sync that the cloud has heard of (their reports acknowledged): see cloudHeard. */
  private writesHeard = 0;
  private values: CloudValues;
  private parts: DeviceParts;
  private suspended = false;
  private readonly dispatch: InboundDispatch;
  private reconnects = 0;
  private ups = 0;
  private readonly time: Time;
  private readonly log: Logger;
  /** The link's stream subscriptions: a replacement with other identifiers gets a new session. */
  private readonly streamIds: Set<string>;
  /** The session command replies go out on: this one, or its successor once it handed over. */
  private replyVia: DeviceSession = this;

  constructor(private readonly options: DeviceSessionOptions) {
    const { device, settings, resolver, identity } = options;
    this.time = options.time ?? systemTime;
    this.log = options.logger.child({ device: device.name });
    this.streamIds = new Set(device.streams.map((s) => s.identifier));
    this.link = new MqttLink({
      name: device.name,
      url: settings.mqttUrl,
      credentials: async () => {
        const credential = await resolver.resolve(identity);
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
    this.parts = { device, commands: options.commands, streams: options.streams };
    this.values = new CloudValues(device.name, options.commands, options.reporter, this.log);
    this.dispatch = options.handover ?? options.dispatch ?? new InboundDispatch({ maxPendingPerDevice: settings.inbound.maxPending, log: options.logger });
    const target = { values: this.values, commands: options.commands, streams: options.streams, log: this.log };
    if (options.handover) {
      const again = this.dispatch.resume(device.name, target);
      if (again > 0) this.log.info({ again }, 'inbound messages unfinished on the replaced device run again');
    } else {
      this.dispatch.addDevice(device.name, target);
    }
    this.currentSync = this.buildSync(device, this.values);
    this.link.onMessage((topic, payload) => this.receive(topic, payload));
    this.link.onEvent((event) => {
      if (event.type === 'up') {
        this.ups += 1;
        if (this.ups > 1) this.reconnects += 1;
        options.reporter.snapshotNext(this.parts.device.name);
        void this.sync(this.ups > 1 ? 'reconnect' : 'start');
      } else if (event.type === 'auth-refused') {
        void resolver.invalidate(identity).catch((err: unknown) => this.log.warn({ err }, 'credential invalidation failed'));
      }
    });
  }

  /** The interface-B sync of the device's current definition; absent without interface B. */
  get valueSync(): CloudValueSync | undefined {
    return this.currentSync;
  }

  private buildSync(device: DeviceConfig, values: CloudValues): CloudValueSync | undefined {
    const { deviceApi, settings, resolver, identity } = this.options;
    return deviceApi
      ? new CloudValueSync({
        identity, credentials: resolver, deviceApi, values, periodMs: settings.syncPeriodMs,
        settled: () => this.cloudHeard(device.name, values),
        writable: device.points.filter((p) => p.writable).map((p) => p.id), timers: this.time, log: this.log,
      })
      : undefined;
  }

  /**
   * Whether the cloud's stored values can be applied: no write is being confirmed, and every write
   * not from a sync has been reported and acknowledged (its report is no longer in the outbox).
   * Reports of polls alone do not hold a sync back: with MQTT unreachable it still applies the
   * cloud's values.
   */
  private cloudHeard(device: string, values: CloudValues): boolean {
    if (values.unconfirmed) return false;
    const written = values.writesNotSynced;
    if (written === this.writesHeard) return true;
    if (this.options.outbox.devicesWithBacklog().includes(device)) return false;
    this.writesHeard = written;
    return true;
  }

  start(): void {
    this.link.start();
    this.forwarder.start();
    this.currentSync?.start();
  }

  /** Gateway mode: no link of its own; pushes and commands arrive through accept(), the sync runs on its period. */
  startWithoutLink(): void {
    this.currentSync?.start();
  }

  /**
   * A reload replaces the device, not its identity: its inbound messages are held from now on;
   * what already runs on the old parts gets up to `settleMs` to finish, then the old parts are
   * fenced (no bus operation, no report through the old point map). Link and forwarder go on.
   */
  async suspend(settleMs: number): Promise<void> {
    if (this.suspended) return;
    this.suspended = true;
    this.dispatch.hold(this.parts.device.name);
    this.log.debug({ settleMs }, 'inbound messages held while the device is replaced');
    this.currentSync?.stop();
    await this.fence(settleMs);
  }

  /**
   * A reload replaces the device and its link (another identity): its inbound messages are held,
   * the link drained (every message the broker sent it joins them), what runs on the old parts
   * gets what is left of `settleMs`, then they are fenced. Returns the held messages for the
   * replacing session (its `handover` option); `successor` then sends this one's command replies.
   */
  async handOver(settleMs: number): Promise<InboundDispatch> {
    const until = this.time.now() + settleMs;
    if (!this.suspended) {
      this.suspended = true;
      this.dispatch.hold(this.parts.device.name);
      this.currentSync?.stop();
      await this.link.drain(settleMs);
      await this.fence(Math.max(0, until - this.time.now()));
    }
    return this.dispatch;
  }

  /** Command replies of messages this session received go out on `session`'s link (it took them over). */
  replyThrough(session: DeviceSession): void {
    this.replyVia = session;
  }

  /** Up to `settleMs` for what runs on the old parts, then no bus operation or report through them. */
  private async fence(settleMs: number): Promise<void> {
    const abort = new AbortController();
    await Promise.race([this.dispatch.idle(this.parts.device.name), sleep(this.time, settleMs, abort.signal).catch(() => undefined)]);
    abort.abort();
    this.values.retire();
    this.parts.commands.retire();
  }

  /**
   * The replacement's parts take over: the held messages (and any the old parts did not finish)
   * run on them. Nothing was missed on the link, so the cloud's values are read again (interface
   * B) only when the replacement has writable points the old definition had not.
   */
  resume(parts: DeviceParts): void {
    const { reporter } = this.options;
    const writableBefore = new Set(this.parts.device.points.filter((p) => p.writable).map((p) => p.id));
    const newlyWritable = parts.device.points.some((p) => p.writable && !writableBefore.has(p.id));
    this.parts = parts;
    this.values = new CloudValues(parts.device.name, parts.commands, reporter, this.log);
    const again = this.dispatch.resume(parts.device.name, { values: this.values, commands: parts.commands, streams: parts.streams, log: this.log });
    if (again > 0) this.log.info({ again }, 'inbound messages unfinished on the replaced device run again');
    this.currentSync = this.buildSync(parts.device, this.values);
    this.suspended = false;
    this.currentSync?.start();
    if (newlyWritable) void this.sync('reload');
  }

  /** `drainMs`: the link is drained first (a replaced session: what it still receives joins the handed-over messages). */
  async stop(drainMs = 0): Promise<void> {
    this.currentSync?.stop();
    this.forwarder.stop();
    await this.link.stop(drainMs);
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
    await this.currentSync?.sync(reason);
  }

  private receive(topic: string, payload: Buffer): void {
    const { maxInboundBytes, inbound: limits } = this.options.settings;
    const message = parseInbound(topic, payload, { streams: this.streamIds, maxPayloadBytes: maxInboundBytes, maxKeys: limits.maxKeys });
    this.accept(message, this.reply);
  }

  /** One parsed message, from this device's link or a gateway's; `reply` answers a command the way it came. */
  accept(message: Inbound, reply: Replier): void {
    this.dispatch.dispatch(this.parts.device.name, message, reply);
  }

  private readonly reply: CommandReplier = (command, result) => {
    if (this.replyVia !== this) return this.replyVia.reply(command, result);
    const message = commandReply(command, result);
    this.link.publish(message.topic, message.payload).catch((err: unknown) => this.log.warn({ id: command.id, err }, 'command reply not delivered'));
  };

  /** Publishes bytes from a stream target on `data/<identifier>` (live data: not through the outbox). */
  publishStream(identifier: string, data: Buffer): Promise<void> {
    return this.link.publish(dataTopic(identifier), data);
  }

  linkState(): 'up' | 'down' {
    return this.link.isUp ? 'up' : 'down';
  }
}
