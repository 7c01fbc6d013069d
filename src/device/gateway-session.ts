// fieldgate's own cloud identity and the sub-devices it speaks for: one MQTT link with the
// identity's credential, their reports batched on `gateway/attributes`, each sub-device's online
// state on `gateway/connect` / `gateway/disconnect` (all online ones announced again after every
// connect), and inbound pushes and commands routed by address to the device's own inbound path.
import type { CloudSettings } from '../core/config/site-types.js';
import type { CredentialResolver, DeviceIdentity } from '../cloud/credentials/credentials.js';
import type { Pacer } from '../cloud/forwarding/forwarder.js';
import { GatewayForwarder } from '../cloud/forwarding/gateway-forwarder.js';
import { GATEWAY_SUBSCRIPTIONS, gatewayCommandReply, gatewayPresence, parseGatewayInbound, type RoutedMessage } from '../cloud/mqtt/gateway-topics.js';
import { MqttLink } from '../cloud/mqtt/link.js';
import { SELF_SUBSCRIPTIONS } from '../cloud/mqtt/self-channel.js';
import type { ReportOutbox } from '../core/outbox-types.js';
import type { Inbound, OutboundMessage } from '../cloud/mqtt/topics.js';
import { systemTime, type Time } from '../core/time.js';
import type { Logger } from '../core/logger.js';
import type { Replier } from './device-session.js';
import { SubDeviceRefusals, type SubDeviceCloudStatus } from './sub-device-refusals.js';

/** One device behind the identity. */
export interface SubDeviceEntry {
  name: string;
  address: string;
  /** The device's own inbound path (validation, write and read-back, busy limits). */
  accept(message: Inbound, reply: Replier): void;
  /** After each connect of the identity's link (sync of writable points). */
  onLinkUp?(reconnect: boolean): void;
}

/** What the session needs of the reporter: online state and snapshots after reconnects. */
export interface PresenceSource {
  isOnline(device: string): boolean;
  snapshotNext(device: string): void;
  onOnlineChange(listener: (device: string, online: boolean) => void): () => void;
}

/** Where the cloud answers each `gateway/attributes` batch. */
const GATEWAY_REPORT_ANSWERS = 'gateway/attributes/response';

export interface GatewaySessionOptions {
  identity: DeviceIdentity;
  settings: CloudSettings & { mqttUrl: string };
  resolver: CredentialResolver;
  outbox: ReportOutbox;
  presence: PresenceSource;
  subDevices: readonly SubDeviceEntry[];
  pacer: Pacer;
  ca: Buffer | undefined;
  logger: Logger;
  time?: Time;
}

export class GatewaySession {
  readonly link: MqttLink;
  readonly forwarder: GatewayForwarder;
  readonly counters = { routed: 0, unknownAddress: 0, invalid: 0, refusals: 0 };
  private readonly byAddress = new Map<string, SubDeviceEntry>();
  private readonly byName = new Map<string, SubDeviceEntry>();
  /** Unknown addresses and refusals already logged (bounded: beyond it only counted). */
  private readonly logged = new Set<string>();
  private readonly log: Logger;
  private readonly refusals: SubDeviceRefusals;
  private ups = 0;
  private stopPresence: (() => void) | undefined;

  constructor(private readonly options: GatewaySessionOptions) {
    const { settings, identity } = options;
    this.log = options.logger.child({ device: identity.name });
    for (const sub of options.subDevices) {
      this.byAddress.set(sub.address, sub);
      this.byName.set(sub.name, sub);
    }
    this.link = new MqttLink({
      name: identity.name,
      url: settings.mqttUrl,
      credentials: async () => {
        const credential = await options.resolver.resolve(identity);
        return { clientId: credential.deviceId, username: credential.accessToken, password: credential.projectKey };
      },
      streams: [],
      // The identity is also a device of its own: its commands go to ops/self (cloud/mqtt/self-channel.ts).
      subscriptions: [...GATEWAY_SUBSCRIPTIONS, ...SELF_SUBSCRIPTIONS],
      keepaliveS: settings.keepaliveS,
      connectTimeoutMs: settings.connectTimeoutMs,
      reconnect: settings.reconnect,
      ...(options.ca ? { ca: options.ca } : {}),
      log: options.logger,
      ...(options.time ? { time: options.time } : {}),
    });
    this.refusals = new SubDeviceRefusals(this.log, (address) => this.byAddress.get(address)?.name);
    this.forwarder = new GatewayForwarder({
      devices: new Map(options.subDevices.map((s) => [s.name, s.address])), outbox: options.outbox, link: this.link, log: this.log,
      onBatch: (addresses) => this.refusals.batchSent(addresses),
      pacer: options.pacer, maxBatchBytes: settings.gatewayBatchMaxBytes ?? 65_536, lingerMs: settings.gatewayBatchLingerMs ?? 100, window: settings.publishWindow, time: options.time ?? systemTime,
    });
    this.link.onMessage((topic, payload) => this.receive(topic, payload));
    this.link.onEvent((event) => {
      if (event.type === 'up' || event.type === 'down') this.refusals.reset();
      if (event.type === 'up') this.onUp();
      else if (event.type === 'auth-refused') {
        void options.resolver.invalidate(identity).catch((err: unknown) => this.log.warn({ err }, 'credential invalidation failed'));
      }
    });
  }

  start(): void {
    this.stopPresence = this.options.presence.onOnlineChange((device, online) => {
      const sub = this.byName.get(device);
      if (sub && this.link.isUp) this.send(gatewayPresence(sub.address, online));
    });
    this.link.start();
    this.forwarder.start();
  }

  async stop(): Promise<void> {
    this.stopPresence?.();
    this.forwarder.stop();
    await this.link.stop();
  }

  /** A sub-device joins (a reload), or a replaced one takes its entry over: its forwarding place in the outbox is kept. */
  addSubDevice(sub: SubDeviceEntry): void {
    const before = this.byName.get(sub.name);
    if (before) this.byAddress.delete(before.address);
    // What the cloud said of another address says nothing of the new one.
    if (before && before.address !== sub.address) this.refusals.forget(sub.name);
    this.byAddress.set(sub.address, sub);
    this.byName.set(sub.name, sub);
    this.forwarder.addDevice(sub.name, sub.address);
    if (this.link.isUp && !before) {
      this.options.presence.snapshotNext(sub.name);
      sub.onLinkUp?.(false);
    }
  }

  /** A sub-device removed by a reload: no longer routed, announced offline unless it is being replaced; its queued reports stay in the outbox. */
  removeSubDevice(name: string, announce = true): void {
    const sub = this.byName.get(name);
    if (!sub) return;
    this.byName.delete(name);
    this.byAddress.delete(sub.address);
    this.forwarder.removeDevice(name);
    if (announce) this.refusals.forget(name);
    if (announce && this.link.isUp) this.send(gatewayPresence(sub.address, false));
  }

  /** New outbox records were committed for `device`; false when it is not a sub-device. */
  notify(device: string): boolean {
    if (!this.byName.has(device)) return false;
    this.forwarder.notify(device);
    return true;
  }

  /** What the cloud answered to a sub-device's reports; undefined for a device that is none. */
  subDeviceStatus(name: string): SubDeviceCloudStatus | undefined {
    const sub = this.byName.get(name);
    return sub ? this.refusals.status(name, sub.address) : undefined;
  }

  get reconnectCount(): number {
    return Math.max(0, this.ups - 1);
  }

  linkState(): 'up' | 'down' {
    return this.link.isUp ? 'up' : 'down';
  }

  private onUp(): void {
    this.ups += 1;
    for (const sub of this.byName.values()) {
      this.options.presence.snapshotNext(sub.name);
      if (this.options.presence.isOnline(sub.name)) this.send(gatewayPresence(sub.address, true));
      sub.onLinkUp?.(this.ups > 1);
    }
  }

  private receive(topic: string, payload: Buffer): void {
    if (!topic.startsWith('gateway/')) return; // the own device's topics (cloud/mqtt/self-channel.ts)
    const { maxInboundBytes, inbound } = this.options.settings;
    const parsed = parseGatewayInbound(topic, payload, { maxPayloadBytes: maxInboundBytes, maxKeys: inbound.maxKeys });
    switch (parsed.kind) {
      case 'routed':
        for (const routed of parsed.messages) this.route(routed);
        return;
      case 'refusal': {
        this.counters.refusals += 1;
        // A refused report is its device's transition (sub-device-refusals.ts); other refusals are logged once per errcode and addresses.
        if (parsed.topic === GATEWAY_REPORT_ANSWERS) return this.refusals.answer(false, parsed.addresses, parsed.errcode, parsed.reason);
        const shown = parsed.addresses.slice(0, 10).map((a) => a.slice(0, 64));
        if (this.firstTime(`refusal:${parsed.errcode}:${shown.join(',')}`)) {
          this.log.warn({ topic: parsed.topic, errcode: parsed.errcode, reason: parsed.reason, subDevices: shown }, 'cloud refused a gateway message');
        }
        return;
      }
      case 'accepted':
        if (parsed.topic === GATEWAY_REPORT_ANSWERS) this.refusals.answer(true, [], 0, '');
        return;
      case 'invalid':
        this.counters.invalid += 1;
        this.log.warn({ topic: parsed.topic, reason: parsed.reason }, 'invalid inbound gateway message');
        return;
    }
  }

  private route({ address, message }: RoutedMessage): void {
    const sub = this.byAddress.get(address);
    if (!sub) {
      // Not ours: no write, no reply (the cloud scopes what it sends; a reply would only feed a flood).
      this.counters.unknownAddress += 1;
      if (this.firstTime(`address:${address.slice(0, 64)}`)) this.log.warn({ subDevice: address.slice(0, 64), kind: message.kind }, 'message for an unknown sub-device address refused');
      return;
    }
    this.counters.routed += 1;
    sub.accept(message, (command, result) => this.send(gatewayCommandReply(address, command, result), command.id));
  }

  private firstTime(key: string): boolean {
    if (this.logged.has(key) || this.logged.size >= (this.options.settings.inbound.unknownAddressesLogged ?? 256)) return false;
    this.logged.add(key);
    return true;
  }

  private send(message: OutboundMessage, id?: number): void {
    this.link.publish(message.topic, message.payload).catch((err: unknown) => this.log.warn({ topic: message.topic, id, err }, 'gateway message not delivered'));
  }
}
