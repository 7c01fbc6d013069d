// The only importer of aedes: an MQTT 3.1.1 broker where every device lives in its own topic box
// (see scoping.ts). aedes 1.2.0 traps met here, each with a regression test:
// - hooks must mutate `packet.topic` / `sub.topic` IN PLACE: aedes persists `packet.subscriptions`
//   (not the sub handed back) and its offline queue replays the stored packet object;
// - authorizeSubscribe runs again on session restore with the stored, already scoped filter;
// - authorizeForward's return value is used only as a yes/no when a persistent session's queue is
//   replayed (the original packet is written), so un-prefixing must also happen in place;
// - aedes has no unsubscribe hook: UNSUBSCRIBE is rewritten as the packet leaves the parser;
// - overlapping subscriptions deliver one copy at the QoS of whichever matched first (delivery-qos.ts).
import type { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import {
  Aedes,
  type AedesPublishPacket,
  type AuthenticateError,
  type AuthErrorCode,
  type Client,
  type ConnectPacket,
  type PublishPacket,
  type Subscription,
} from 'aedes';
import type { Logger } from 'fieldgate/workspace-kit';
import type { DeviceDirectory } from '../channel.js';
import { boundMqttPackets } from '../mqtt-packet-bound.js';
import { deliverAtMaxQos } from './delivery-qos.js';
import type { Presence } from './presence.js';
import {
  classifyUplink,
  scopeDownlink,
  scopeSubscription,
  scopeUnsubscription,
  scopeUplink,
  unscopeForDevice,
  type UplinkTopic,
} from './scoping.js';
import type { UplinkOutcome } from './uplink.js';

export interface ScopedBrokerDeps {
  directory: DeviceDirectory;
  presence: Presence;
  onUplink(deviceId: string, uplink: UplinkTopic, payload: Buffer): UplinkOutcome;
  /** Largest MQTT packet body a device may send (aedes has no bound of its own). */
  maxPacketBytes: number;
  log: Logger;
  /** Sees every message just before it is written to a device's connection (test peers count what reached a device). */
  onForward?: DownlinkObserver;
}

/** A message the broker is about to write to the connection of `deviceId`, with its un-prefixed topic. */
export type DownlinkObserver = (deviceId: string, topic: string, payload: Buffer) => void;

interface ParsedPacket {
  cmd: string;
  unsubscriptions?: string[];
}

const BAD_USERNAME_OR_PASSWORD = 4;
const NOT_AUTHORIZED = 5;
const SERVER_UNAVAILABLE = 3;

function authError(returnCode: number, message: string): AuthenticateError {
  return Object.assign(new Error(message), { returnCode: returnCode as AuthErrorCode });
}

/** aedes keeps its mqtt-packet parser private; it is the one place that sees every packet first. */
function packetParserOf(client: Client): EventEmitter {
  const parser = (client as unknown as { _parser?: EventEmitter })._parser;
  if (parser === undefined || typeof parser.prependListener !== 'function') {
    throw new Error('aedes client has no packet parser: UNSUBSCRIBE scoping would be unsafe');
  }
  return parser;
}

export class ScopedBroker {
  /** Which device each authenticated connection speaks for. */
  private readonly identities = new WeakMap<Client, string>();
  /** UNSUBSCRIBEs parsed before their CONNECT was authenticated (same TCP chunk). */
  private readonly earlyUnsubscribes = new WeakMap<Client, ParsedPacket[]>();
  private readonly sockets = new Set<Socket>();
  private tooLarge = 0;

  private constructor(
    readonly aedes: Aedes,
    private readonly deps: ScopedBrokerDeps,
  ) {}

  static async start(deps: ScopedBrokerDeps): Promise<ScopedBroker> {
    const aedes = await Aedes.createBroker();
    const broker = new ScopedBroker(aedes, deps);
    broker.installHooks();
    return broker;
  }

  /** Connections closed for an MQTT packet over deps.maxPacketBytes. */
  get packetsTooLarge(): number {
    return this.tooLarge;
  }

  /** Serve one accepted TCP connection. */
  handleConnection(socket: Socket): void {
    this.sockets.add(socket);
    const client = this.aedes.handle(socket);
    boundMqttPackets(socket, this.deps.maxPacketBytes, (verdict) => {
      this.tooLarge += 1;
      this.deps.log.warn({ deviceId: this.identities.get(client), remote: socket.remoteAddress, ...verdict, maxPacketBytes: this.deps.maxPacketBytes },
        'device connection closed: MQTT packet over the bound');
    });
    deliverAtMaxQos(client);
    // aedes has no unsubscribe hook, and its handler (lib/handlers/unsubscribe.js) looks the
    // filter up as named. The client's mqtt-packet parser emits every decoded packet to aedes's
    // own listener (lib/client.js enqueue); a listener prepended to it runs first, synchronously,
    // so the topics are scoped before aedes validates, queues or handles the packet. (preConnect
    // sees only CONNECT; wrapping the socket would mean a second MQTT parser.)
    packetParserOf(client).prependListener('packet', (packet: ParsedPacket) => {
      if (packet.cmd !== 'unsubscribe') return;
      const deviceId = this.identities.get(client);
      if (deviceId !== undefined) this.scopeUnsubscribe(deviceId, packet);
      else this.earlyUnsubscribes.set(client, [...(this.earlyUnsubscribes.get(client) ?? []), packet]);
    });
    socket.on('close', () => {
      this.sockets.delete(socket);
      const deviceId = this.identities.get(client);
      if (deviceId !== undefined) this.deps.presence.leave(deviceId, client);
    });
  }

  /** Deliver to a device's un-prefixed topic at QoS 1 (queued for a persistent session). */
  async publish(deviceId: string, topic: string, payload: Buffer): Promise<void> {
    const packet: PublishPacket = {
      cmd: 'publish', topic: scopeDownlink(deviceId, topic), payload, qos: 1, retain: false, dup: false,
    };
    return new Promise((resolve, reject) => {
      this.aedes.publish(packet, (err) => (err ? reject(err) : resolve()));
    });
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.aedes.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
  }

  private scopeUnsubscribe(deviceId: string, packet: ParsedPacket): void {
    const topics = packet.unsubscriptions ?? [];
    for (let i = 0; i < topics.length; i += 1) topics[i] = scopeUnsubscription(deviceId, topics[i]);
  }

  private installHooks(): void {
    const { aedes } = this;
    aedes.preConnect = (client, packet, callback) => this.preConnect(packet, callback);
    aedes.authenticate = (client, username, password, done) => this.authenticate(client, username, password, done);
    aedes.authorizePublish = (client, packet, callback) => this.authorizePublish(client, packet, callback);
    aedes.authorizeSubscribe = (client, sub, callback) => this.authorizeSubscribe(client, sub, callback);
    aedes.authorizeForward = (client, packet) => this.authorizeForward(client, packet);
    // Online once registered, just before the CONNACK is written: 'connackSent' and
    // 'clientReady' fire only after the device may already have read its CONNACK and acted.
    aedes.on('client', (client) => {
      const deviceId = this.identities.get(client);
      if (deviceId !== undefined) this.deps.presence.ready(deviceId, client);
    });
    aedes.on('clientError', (client, err) => {
      this.deps.log.debug({ deviceId: this.identities.get(client), err: err.message }, 'mqtt client error');
    });
    aedes.on('connectionError', (_client, err) => {
      this.deps.log.debug({ err: err.message }, 'mqtt connection error');
    });
    // aedes emits 'error' on persistence failures; an EventEmitter without a listener would throw.
    (aedes as EventEmitter).on('error', (err: Error) => this.deps.log.error({ err }, 'mqtt broker error'));
  }

  private preConnect(packet: ConnectPacket, callback: (error: Error | null, success: boolean) => void): void {
    // The cloud uses no last will; dropping it keeps a will from publishing as the device later.
    if (packet.will !== undefined) {
      this.deps.log.debug({ topic: packet.will.topic }, 'mqtt last will ignored');
      delete packet.will;
    }
    callback(null, true);
  }

  private authenticate(
    client: Client,
    username: string | undefined,
    password: Buffer | undefined,
    done: (error: AuthenticateError | null, success: boolean | null) => void,
  ): void {
    if (username === undefined || username.length === 0 || password === undefined || password.length === 0) {
      this.deps.log.info({ clientId: client.id }, 'device connection refused: no credentials');
      done(authError(BAD_USERNAME_OR_PASSWORD, 'username and password are required'), null);
      return;
    }
    let deviceId: string | undefined;
    try {
      deviceId = this.deps.directory.authenticate(username, password.toString('utf8'));
    } catch (err) {
      this.deps.log.error({ err }, 'device directory failed');
      done(authError(SERVER_UNAVAILABLE, 'device directory unavailable'), null);
      return;
    }
    if (deviceId === undefined) {
      this.deps.log.info({ clientId: client.id }, 'device connection refused: unknown credentials');
      done(authError(NOT_AUTHORIZED, 'not authorized'), null);
      return;
    }
    this.identities.set(client, deviceId);
    // The session belongs to the device, whatever client id it chose: aedes then kicks an older
    // connection of the same device ([MQTT-3.1.4-2]) and no device can take over another's
    // persistent session by naming its client id.
    client.id = deviceId;
    for (const packet of this.earlyUnsubscribes.get(client) ?? []) this.scopeUnsubscribe(deviceId, packet);
    this.earlyUnsubscribes.delete(client);
    this.deps.presence.join(deviceId, client);
    done(null, true);
  }

  private authorizePublish(client: Client | null, packet: PublishPacket, callback: (error?: Error | null) => void): void {
    const deviceId = client === null ? undefined : this.identities.get(client);
    if (deviceId === undefined) {
      callback(new Error('publish from an unauthenticated connection'));
      return;
    }
    const topic = packet.topic;
    // In place, before anything else: whatever happens next, aedes only ever routes the scoped
    // name, and the cloud never keeps a device's publish as a retained message.
    packet.topic = scopeUplink(deviceId, topic);
    packet.retain = false;
    const uplink = classifyUplink(topic);
    if (uplink === undefined) {
      this.deps.log.warn({ deviceId, topic }, 'device publish outside the device channel dropped');
      callback(null);
      return;
    }
    let outcome: UplinkOutcome;
    try {
      outcome = this.deps.onUplink(deviceId, uplink, Buffer.from(packet.payload));
    } catch (err) {
      // A throw inside an aedes hook would escape into its stream handling: never let it.
      this.deps.log.error({ deviceId, topic, err }, 'device message handling failed');
      outcome = { action: 'accept' };
    }
    this.deps.log.debug({ deviceId, topic, bytes: packet.payload.length }, 'device message');
    if (outcome.action === 'disconnect') {
      this.deps.log.warn({ deviceId, topic, reason: outcome.reason }, 'device disconnected for a bad message');
      callback(new Error(outcome.reason));
      return;
    }
    callback(null);
  }

  private authorizeSubscribe(
    client: Client,
    sub: Subscription,
    callback: (error: Error | null, subscription?: Subscription | null) => void,
  ): void {
    const deviceId = this.identities.get(client);
    const scoped = deviceId === undefined ? undefined : scopeSubscription(deviceId, sub.topic);
    if (deviceId === undefined || scoped === undefined) {
      this.deps.log.info({ deviceId, topic: sub.topic }, 'device subscription refused');
      // aedes persists the whole SUBSCRIBE of a persistent session, refused filters included:
      // park the refused one in the device's own box, where nothing is ever published.
      if (deviceId !== undefined) sub.topic = scopeUnsubscription(deviceId, sub.topic);
      callback(null, null);
      return;
    }
    sub.topic = scoped;
    callback(null, sub);
  }

  private authorizeForward(client: Client, packet: AedesPublishPacket): AedesPublishPacket | null {
    const deviceId = this.identities.get(client);
    const topic = deviceId === undefined ? undefined : unscopeForDevice(deviceId, packet.topic);
    if (topic === undefined || deviceId === undefined) return null;
    packet.topic = topic;
    this.deps.onForward?.(deviceId, topic, packet.payload as Buffer);
    return packet;
  }
}
