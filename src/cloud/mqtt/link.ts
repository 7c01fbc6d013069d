// One MQTT connection per device identity (the only importer of mqtt). mqtt.js's own reconnect
// is off: we reconnect with capped backoff + jitter, fetch the credential before every attempt
// (it may have been refreshed after a refusal) and subscribe again after every connect.
import mqtt from 'mqtt';
import type { IClientOptions, MqttClient } from 'mqtt';
import { backoffDelay } from '../../core/backoff.js';
import { subscriptionTopics } from './topics.js';
import { probeTargetOf, sharedProbes } from './broker-probe.js';
import { brokerUrlOptions } from './broker-url.js';
import { sleep, systemTime, type Time } from '../../core/time.js';
import { InboundPacer } from './inbound-pacer.js';
import { LinkDownError, type LinkCredentials, type LinkEvent, type MessageHandler, type MqttLinkOptions } from './link-types.js';

export { LinkDownError, type LinkCredentials, type LinkEvent, type MessageHandler, type MqttLinkOptions };

interface InFlight {
  reject: (err: Error) => void;
}

/** One device's MQTT connection to the cloud (not the emulator's broker-side device channel). */
export class MqttLink {
  private client: MqttClient | undefined;
  private up = false;
  private stopped = true;
  private attempt = 0;
  private upSince = 0;
  private cancelReconnect: (() => void) | undefined;
  private cancelProbe: (() => void) | undefined;
  /** The last attempt failed below MQTT (refused, unreachable, timed out): the broker is away, not refusing. */
  private unreachable = false;
  private lastError: string | undefined;
  private authCode: number | undefined;
  private downLogged = false;
  private refusalLogged = false;
  private readonly inFlight = new Set<InFlight>();
  private readonly messageHandlers = new Set<MessageHandler>();
  private readonly eventListeners = new Set<(event: LinkEvent) => void>();
  private readonly random: () => number;
  private readonly time: Time;
  private readonly pacer = new InboundPacer({
    hold: () => this.socket()?.cork?.(),
    release: () => this.socket()?.uncork?.(),
  });

  constructor(private readonly options: MqttLinkOptions) {
    this.random = options.random ?? Math.random;
    this.time = options.time ?? systemTime;
  }

  /** The current connection's stream, for holding writes back during a burst of inbound messages. */
  private socket(): { cork?: () => void; uncork?: () => void } | undefined {
    return this.client?.stream as { cork?: () => void; uncork?: () => void } | undefined;
  }

  get isUp(): boolean {
    return this.up;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.connect();
  }

  /** `drainMs`: first drain (see drain), so nothing the broker sends dies unread with the socket. */
  async stop(drainMs = 0): Promise<void> {
    if (drainMs > 0) await this.drain(drainMs);
    this.stopped = true;
    this.cancelWait();
    const client = this.client;
    this.client = undefined;
    this.up = false;
    this.failInFlight('link stopped');
    if (client) await client.endAsync(true).catch(() => undefined);
  }

  /**
   * Before the link is discarded (its device replaced by one on another link): asks the broker to
   * send nothing more (UNSUBSCRIBE) and waits for its answer, up to `timeoutMs`. mqtt.js hands a
   * connection's packets over in order, so every message the broker sent before has reached the
   * handlers by then, instead of dying unread with the socket. A connection still subscribing
   * (connected, not up yet) is drained too: the broker may already forward to it. False when not
   * drained (not connected, refused, too slow).
   */
  async drain(timeoutMs: number): Promise<boolean> {
    const client = this.client;
    if (!client || !client.connected || this.stopped) return false;
    const topics = [...(this.options.subscriptions ?? subscriptionTopics(this.options.streams))];
    const abort = new AbortController();
    const drained = await Promise.race([
      client.unsubscribeAsync(topics).then(() => true, () => false),
      sleep(this.time, timeoutMs, abort.signal).then(() => false, () => false),
    ]);
    abort.abort();
    if (!drained) this.options.log.warn({ device: this.options.name, timeoutMs }, 'cloud link not drained before it closes');
    return drained;
  }

  onMessage(handler: MessageHandler): () => void {
    this.messageHandlers.add(handler);
    return () => this.messageHandlers.delete(handler);
  }

  onEvent(listener: (event: LinkEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  /** QoS 1 publish; resolves on PUBACK, rejects with LinkDownError if the link is or goes down. */
  publish(topic: string, payload: Buffer | string): Promise<void> {
    const client = this.client;
    if (!client || !this.up) return Promise.reject(new LinkDownError(this.options.name));
    return new Promise<void>((resolve, reject) => {
      const entry: InFlight = { reject };
      this.inFlight.add(entry);
      client.publish(topic, payload, { qos: 1 }, (err) => {
        this.inFlight.delete(entry);
        if (err) reject(new LinkDownError(this.options.name, err.message));
        else resolve();
      });
    });
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    let credentials: LinkCredentials;
    try {
      credentials = await this.options.credentials();
    } catch (err) {
      this.lastError = `no credential: ${err instanceof Error ? err.message : String(err)}`;
      this.scheduleReconnect();
      return;
    }
    if (this.stopped) return;
    this.lastError = undefined;
    this.authCode = undefined;
    // Until the TCP connection opens: a broker that accepts and then refuses is not unreachable.
    this.unreachable = true;
    const options: IClientOptions = {
      protocolVersion: 4,
      clean: true,
      clientId: credentials.clientId,
      username: credentials.username,
      password: credentials.password,
      keepalive: this.options.keepaliveS,
      connectTimeout: this.options.connectTimeoutMs,
      reconnectPeriod: 0,
      queueQoSZero: false,
      resubscribe: false,
      rejectUnauthorized: true,
      // Otherwise mqtt-packet builds a process-wide table of 65,536 two-byte Buffers on the first
      // packet written: ~8 MB of heap kept for good, to save a 2-byte allocation per packet.
      writeCache: false,
    };
    if (this.options.ca !== undefined) options.ca = this.options.ca;
    // Options, not the URL string: mqtt.js would read it with the deprecated url.parse() (DEP0169).
    const { username, password, ...where } = brokerUrlOptions(this.options.url);
    const client = mqtt.connect({ ...where, ...options, ...(username === undefined ? {} : { username }), ...(password === undefined ? {} : { password }) });
    this.client = client;
    (client.stream as { once?: (event: string, cb: () => void) => void } | undefined)?.once?.('connect', () => {
      if (client === this.client) this.unreachable = false;
    });
    client.on('connect', () => {
      // Small MQTT packets (PUBACKs, command replies) must not wait for Nagle's algorithm.
      const socket = client.stream as { setNoDelay?: (on: boolean) => void };
      socket.setNoDelay?.(true);
      void this.onConnected(client);
    });
    client.on('message', (topic, payload) => this.dispatch(topic, payload));
    // Called after each 'message': a burst of inbound messages yields to polling now and then.
    client.handleMessage = (_packet, callback) => this.pacer.handled(() => callback());
    client.on('error', (err) => {
      this.lastError = err.message;
      const code = (err as Error & { code?: unknown }).code;
      if (code === 4 || code === 5) this.authCode = code;
    });
    client.on('close', () => this.onClosed(client));
  }

  private async onConnected(client: MqttClient): Promise<void> {
    try {
      const granted = await client.subscribeAsync([...(this.options.subscriptions ?? subscriptionTopics(this.options.streams))], { qos: 1 });
      const refused = granted.filter((g) => g.qos === 128).map((g) => g.topic);
      if (refused.length > 0) throw new Error(`subscription refused: ${refused.join(', ')}`);
    } catch (err) {
      this.lastError = err instanceof Error ? err.message : String(err);
      client.end(true);
      return;
    }
    if (client !== this.client || this.stopped) return;
    this.up = true;
    this.upSince = this.time.now();
    this.downLogged = false;
    this.refusalLogged = false;
    this.options.log.info({ device: this.options.name }, 'cloud link up');
    this.emit({ type: 'up' });
  }

  private onClosed(client: MqttClient): void {
    if (client !== this.client) return;
    client.removeAllListeners('close');
    client.end(true);
    this.client = undefined;
    const wasUp = this.up;
    this.up = false;
    this.failInFlight('connection lost');
    if (this.stopped) return;
    const reason = this.lastError ?? 'connection closed';
    if (wasUp && this.time.now() - this.upSince >= (this.options.stableAfterMs ?? 5000)) this.attempt = 0;
    if (wasUp || !this.downLogged) {
      this.downLogged = true;
      this.options.log.warn({ device: this.options.name, reason }, 'cloud link down');
      this.emit({ type: 'down', reason });
    }
    if (this.authCode !== undefined) {
      if (!this.refusalLogged) {
        this.refusalLogged = true;
        this.options.log.warn({ device: this.options.name, code: this.authCode }, 'broker refused the device credential');
      }
      this.emit({ type: 'auth-refused', code: this.authCode, reason });
    }
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped) return;
    if (!this.downLogged) {
      this.downLogged = true;
      this.options.log.warn({ device: this.options.name, reason: this.lastError }, 'cloud link down');
      this.emit({ type: 'down', reason: this.lastError ?? 'not connected' });
    }
    this.attempt += 1;
    const delay = backoffDelay(this.options.reconnect, this.attempt - 1, this.random);
    this.options.log.debug({ device: this.options.name, delay, attempt: this.attempt }, 'cloud link reconnect scheduled');
    this.cancelReconnect = this.time.setTimer(() => {
      this.cancelWait();
      void this.connect();
    }, delay);
    this.probeWhileWaiting(delay);
  }

  /**
   * A broker that was unreachable may come back long before a delay near `maxMs` ends: a shared
   * TCP probe every probeMs cuts the wait short (after a little jitter, so links do not all
   * connect in the same instant). The attempt counter is kept: a broker that then refuses gets
   * the full backoff again.
   */
  private probeWhileWaiting(delay: number): void {
    const every = this.options.reconnect.probeMs ?? 0;
    const target = probeTargetOf(this.options.url);
    if (!this.unreachable || every <= 0 || delay <= every || !target) return;
    const probes = this.options.probes ?? sharedProbes(this.time);
    this.cancelProbe = probes.watch(target, every, () => {
      this.cancelProbe = undefined;
      if (this.stopped || this.cancelReconnect === undefined) return;
      this.cancelReconnect();
      const spread = Math.round(every * Math.min(1, Math.max(0, this.options.reconnect.jitter)) * this.random());
      this.options.log.debug({ device: this.options.name, spread }, 'cloud broker reachable again, reconnecting');
      this.cancelReconnect = this.time.setTimer(() => {
        this.cancelWait();
        void this.connect();
      }, spread);
    });
  }

  private cancelWait(): void {
    this.cancelReconnect?.();
    this.cancelReconnect = undefined;
    this.cancelProbe?.();
    this.cancelProbe = undefined;
  }

  private dispatch(topic: string, payload: Buffer): void {
    for (const handler of this.messageHandlers) {
      try {
        handler(topic, payload);
      } catch (err) {
        this.options.log.error({ device: this.options.name, topic, err }, 'inbound message handler failed');
      }
    }
  }

  private emit(event: LinkEvent): void {
    for (const listener of this.eventListeners) {
      try {
        listener(event);
      } catch (err) {
        this.options.log.error({ device: this.options.name, err }, 'link event listener failed');
      }
    }
  }

  private failInFlight(reason: string): void {
    const error = new LinkDownError(this.options.name, reason);
    for (const entry of this.inFlight) entry.reject(error);
    this.inFlight.clear();
  }
}
