// The app-side subscription broker: a second aedes instance, separate from the device channel as
// the cloud keeps it. Read-only sessions logged in with ProjectViewKey / ProjectViewSecret;
// subscriptions limited to the project's app topics at QoS 0; any PUBLISH closes the connection.
// Fan-out is bounded: a subscriber whose stream needs draining gets no more messages (counted),
// and one that stays stalled is disconnected, so one frozen dashboard never holds the others.
import type { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import { Aedes, type AedesPublishPacket, type AuthenticateError, type AuthErrorCode, type Client, type PublishPacket, type Subscription } from 'aedes';
import type { Logger } from 'fieldgate/workspace-kit';
import { boundMqttPackets } from '../mqtt-packet-bound.js';
import { checkAppFilter } from './topics.js';

export interface AppBrokerLimits {
  /** Open app sessions at once; more are refused with CONNACK 3 (server unavailable). */
  maxSessions: number;
  /** Distinct filters one session may hold; more are refused (SUBACK 0x80). */
  maxSubscriptionsPerSession: number;
  /** A subscriber stalled (stream not drained) this long is disconnected. */
  slowSubscriberTimeoutMs: number;
  /** Largest MQTT packet body (remaining length) an app may send, on any door; a bigger header closes it. */
  maxPacketBytes: number;
  /** Connections open and not yet logged in, on all doors; one more is closed at once (a flood of idle sockets). */
  maxPendingLogins: number;
  /** A connection that has not logged in within this is closed. */
  loginTimeoutMs: number;
}

/** maxPacketBytes has no default here: it is the app side's one frame bound (AppSideOptions.maxFrameBytes). */
export const DEFAULT_APP_BROKER_LIMITS: Omit<AppBrokerLimits, 'maxPacketBytes'> = {
  maxSessions: 64, maxSubscriptionsPerSession: 256, slowSubscriberTimeoutMs: 10_000, maxPendingLogins: 64, loginTimeoutMs: 10_000,
};

export interface AppBrokerCounters {
  sessionsOpen: number;
  sessionsAccepted: number;
  loginsRefused: number;
  subscriptionsRefused: number;
  publishesRefused: number;
  messagesPublished: number;
  messagesDiscardedSlow: number;
  slowSubscribersDropped: number;
  /** Connections closed for announcing an MQTT packet over maxPacketBytes (or a malformed length). */
  packetsTooLarge: number;
  /** Connections closed on arrival because maxPendingLogins others had not logged in yet. */
  connectionsRefusedPending: number;
}

interface SessionState {
  filters: Set<string>;
  /** When this subscriber's stream first needed draining, while it still does. */
  stalledSince: number | undefined;
  conn: Duplex;
}

const BAD_USERNAME_OR_PASSWORD = 4;
const NOT_AUTHORIZED = 5;
const SERVER_UNAVAILABLE = 3;

function authError(returnCode: number, message: string): AuthenticateError {
  return Object.assign(new Error(message), { returnCode: returnCode as AuthErrorCode });
}

export interface AppCredentials {
  viewKey: string;
  viewSecret: string;
}

export class AppBroker {
  readonly counters: AppBrokerCounters = {
    sessionsOpen: 0, sessionsAccepted: 0, loginsRefused: 0, subscriptionsRefused: 0, publishesRefused: 0,
    messagesPublished: 0, messagesDiscardedSlow: 0, slowSubscribersDropped: 0, packetsTooLarge: 0,
    connectionsRefusedPending: 0,
  };
  /** Whether the pending-login bound is being hit (logged once per episode, not per connection). */
  private refusingPending = false;
  private readonly sessions = new WeakMap<Client, SessionState>();
  private readonly conns = new WeakMap<Client, Duplex>();
  private readonly open = new Set<Duplex>();
  /** Sessions already dropped as slow (by our check or aedes's drain timeout): counted once. */
  private readonly droppedSlow = new WeakSet<Client>();

  private constructor(
    private readonly aedes: Aedes,
    private readonly credentials: AppCredentials,
    private readonly limits: AppBrokerLimits,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {}

  static async start(credentials: AppCredentials, limits: AppBrokerLimits, log: Logger, now: () => number = Date.now): Promise<AppBroker> {
    // drainTimeout: aedes's own net under ours, for a write already waiting on a drain that never
    // comes while no further message arrives to trip our check (twice ours, so ours trips first).
    const aedes = await Aedes.createBroker({ drainTimeout: 2 * limits.slowSubscriberTimeoutMs, connectTimeout: limits.loginTimeoutMs });
    const broker = new AppBroker(aedes, credentials, limits, log, now);
    broker.installHooks();
    return broker;
  }

  /** Serve one app connection: a TCP socket or a WebSocket stream. */
  handle(conn: Duplex): void {
    if (this.open.size - this.counters.sessionsOpen >= this.limits.maxPendingLogins) {
      this.counters.connectionsRefusedPending += 1;
      if (!this.refusingPending) this.log.warn({ maxPendingLogins: this.limits.maxPendingLogins }, 'app connections refused: too many not logged in');
      this.refusingPending = true;
      conn.destroy();
      return;
    }
    if (this.refusingPending) this.log.info({ refused: this.counters.connectionsRefusedPending }, 'app connections accepted again');
    this.refusingPending = false;
    this.open.add(conn);
    const client = this.aedes.handle(conn);
    boundMqttPackets(conn, this.limits.maxPacketBytes, (verdict) => {
      this.counters.packetsTooLarge += 1;
      this.log.warn({ clientId: client.id, ...verdict, maxPacketBytes: this.limits.maxPacketBytes }, 'app connection closed: MQTT packet over the bound');
    });
    this.conns.set(client, conn);
    conn.once('close', () => {
      this.open.delete(conn);
      if (this.sessions.has(client)) {
        this.sessions.delete(client);
        this.counters.sessionsOpen -= 1;
      }
    });
  }

  /** Fan a message out to every matching subscriber at QoS 0. */
  publish(topic: string, payload: Buffer, done: () => void): void {
    const packet: PublishPacket = { cmd: 'publish', topic, payload, qos: 0, retain: false, dup: false };
    this.counters.messagesPublished += 1;
    this.aedes.publish(packet, (err) => {
      if (err) this.log.warn({ topic, err }, 'app-side message not published');
      done();
    });
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.aedes.close(() => resolve()));
    for (const conn of this.open) conn.destroy();
  }

  private installHooks(): void {
    const { aedes } = this;
    aedes.preConnect = (_client, packet, callback) => {
      // Read-only sessions: a last will would be a publish by the back door.
      delete packet.will;
      callback(null, true);
    };
    aedes.authenticate = (client, username, password, done) => this.authenticate(client, username, password, done);
    aedes.authorizePublish = (client, packet, callback) => {
      if (client === null) {
        callback(null);
        return;
      }
      this.counters.publishesRefused += 1;
      this.log.warn({ clientId: client.id, topic: packet.topic }, 'app session publish refused: connection closed');
      callback(new Error('the app-side subscription is read-only'));
    };
    aedes.authorizeSubscribe = (client, sub, callback) => this.authorizeSubscribe(client, sub, callback);
    aedes.authorizeForward = (client, packet) => this.authorizeForward(client, packet);
    // A filter given up no longer counts against the session's bound.
    aedes.on('unsubscribe', (filters, client) => {
      const session = this.sessions.get(client);
      if (session) for (const filter of filters) session.filters.delete(filter);
    });
    aedes.on('clientError', (client, err) => {
      if (err.message === 'drain timeout') this.dropSlow(client, undefined);
      else this.log.debug({ clientId: client.id, err: err.message }, 'app session error');
    });
    aedes.on('connectionError', (_client, err) => this.log.debug({ err: err.message }, 'app connection error'));
    (aedes as EventEmitter).on('error', (err: Error) => this.log.error({ err }, 'app broker error'));
  }

  private authenticate(
    client: Client, username: string | undefined, password: Buffer | undefined,
    done: (error: AuthenticateError | null, success: boolean | null) => void,
  ): void {
    const refuse = (code: number, reason: string): void => {
      this.counters.loginsRefused += 1;
      this.log.info({ clientId: client.id, reason }, 'app session refused');
      done(authError(code, reason), null);
    };
    if (username === undefined || username.length === 0 || password === undefined || password.length === 0) {
      refuse(BAD_USERNAME_OR_PASSWORD, 'ProjectViewKey and ProjectViewSecret are required');
      return;
    }
    if (username !== this.credentials.viewKey || password.toString('utf8') !== this.credentials.viewSecret) {
      refuse(NOT_AUTHORIZED, 'unknown ProjectViewKey or wrong ProjectViewSecret');
      return;
    }
    if (this.counters.sessionsOpen >= this.limits.maxSessions) {
      refuse(SERVER_UNAVAILABLE, 'too many app sessions');
      return;
    }
    const conn = this.conns.get(client);
    if (conn === undefined) {
      refuse(SERVER_UNAVAILABLE, 'connection already gone');
      return;
    }
    this.sessions.set(client, { filters: new Set(), stalledSince: undefined, conn });
    this.counters.sessionsOpen += 1;
    this.counters.sessionsAccepted += 1;
    this.log.info({ clientId: client.id }, 'app session open');
    done(null, true);
  }

  private authorizeSubscribe(client: Client, sub: Subscription, callback: (error: Error | null, subscription?: Subscription | null) => void): void {
    const session = this.sessions.get(client);
    const verdict = checkAppFilter(this.credentials.viewKey, sub.topic);
    let reason: string | undefined;
    if (session === undefined) reason = 'no session';
    else if (!verdict.ok) reason = verdict.reason;
    // The vendor's samples say the QoS must be 0: a dashboard asking for more is told no here too.
    else if (sub.qos !== 0) reason = 'QoS must be 0';
    else if (!session.filters.has(sub.topic) && session.filters.size >= this.limits.maxSubscriptionsPerSession) {
      reason = 'too many subscriptions in this session';
    }
    if (reason !== undefined || session === undefined) {
      this.counters.subscriptionsRefused += 1;
      this.log.debug({ clientId: client.id, topic: sub.topic, reason }, 'app subscription refused');
      callback(null, null);
      return;
    }
    session.filters.add(sub.topic);
    callback(null, sub);
  }

  private authorizeForward(client: Client, packet: AedesPublishPacket): AedesPublishPacket | null {
    const session = this.sessions.get(client);
    if (session === undefined) return null;
    if (!session.conn.writableNeedDrain) {
      session.stalledSince = undefined;
      return packet;
    }
    // QoS 0 may be lost: discard rather than queue behind a subscriber that is not reading.
    this.counters.messagesDiscardedSlow += 1;
    const now = this.now();
    session.stalledSince ??= now;
    if (now - session.stalledSince >= this.limits.slowSubscriberTimeoutMs) this.dropSlow(client, now - session.stalledSince);
    return null;
  }

  private dropSlow(client: Client, stalledMs: number | undefined): void {
    if (this.droppedSlow.has(client)) return;
    this.droppedSlow.add(client);
    this.counters.slowSubscribersDropped += 1;
    this.log.warn({ clientId: client.id, stalledMs }, 'slow app subscriber disconnected');
    this.conns.get(client)?.destroy();
  }
}
