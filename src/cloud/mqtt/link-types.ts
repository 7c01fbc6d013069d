// The MQTT link's public contract: its options, events, credential shape and publish error.
import type { Logger } from '../../core/logger.js';
import type { BackoffConfig } from '../../core/config/site-types.js';
import type { Time } from '../../core/time.js';
import type { BrokerProbes } from './broker-probe.js';

export interface LinkCredentials {
  clientId: string;
  username: string;
  password: string;
}

export interface MqttLinkOptions {
  /** Gateway-side device name (logs only). */
  name: string;
  /** mqtt://host:port or mqtts://host:port. */
  url: string;
  /** Asked before every connect attempt. */
  credentials: () => Promise<LinkCredentials>;
  /** Custom data stream identifiers to subscribe `data/<id>/set` for. */
  streams: readonly string[];
  /** Topics to subscribe instead of a device's own (the identity's gateway topics). */
  subscriptions?: readonly string[];
  keepaliveS: number;
  connectTimeoutMs: number;
  /** `probeMs`: while a delay after an unreachable broker runs, a TCP probe this often cuts it short (0 = off). */
  reconnect: BackoffConfig & { probeMs?: number };
  /** Shared probe loops (one per broker address); the clock's by default. */
  probes?: BrokerProbes;
  /** CA bundle (PEM) for mqtts; Node's default trust store when absent. */
  ca?: string | Buffer;
  log: Logger;
  random?: () => number;
  /** An up period shorter than this does not reset the backoff (stops kick-and-reconnect storms). */
  stableAfterMs?: number;
  /** Clock and reconnect timer; the system's by default. */
  time?: Time;
}

export type LinkEvent =
  | { type: 'up' }
  | { type: 'down'; reason: string }
  /** CONNACK 4 (bad username or password) or 5 (not authorized): the credential should be fetched again. */
  | { type: 'auth-refused'; code: number; reason: string };

export type MessageHandler = (topic: string, payload: Buffer) => void;

export class LinkDownError extends Error {
  override readonly name = 'LinkDownError';
  constructor(device: string, detail = 'link is down') {
    super(`cannot publish for device "${device}": ${detail}`);
  }
}
