// The validated shape of a site file's buses (site-types.ts re-exports it): each kind, and what they share.
import type { ShareConfig } from './share-types.js';

export type Parity = 'none' | 'even' | 'odd';

/** What every bus kind has: its name, reply timeout, reconnect backoff, unit cool-down and busy repeats. */
interface BusBasics {
  name: string;
  timeoutMs: number;
  reconnect: BackoffConfig;
  cooldown: CooldownConfig;
  busyRetries: number;
  /** RTU framing: repeats of a read that timed out, the identical request (absent: once). */
  timeoutRepeats?: number;
  /** RTU framing: a unit seen answering late is treated so until this many answers in time (absent: 20)... */
  lateSeenForgetAfterAnswers?: number;
  /** ...or this long without a late reply (absent: 120 s). */
  lateSeenForgetAfterMs?: number;
}

export interface RtuBusConfig extends BusBasics {
  kind: 'rtu';
  path: string;
  baudRate: number;
  parity: Parity;
  dataBits: 7 | 8;
  stopBits: 1 | 2;
  /** Silence kept between the end of one reply and the next request (t3.5 at least). */
  interFrameDelayMs: number;
  /** The RS-485 adapter returns each request before the reply (local echo): expect and strip it. */
  echo?: boolean;
}

export interface TcpBusConfig extends BusBasics {
  kind: 'tcp';
  host: string;
  port: number;
  /** Concurrent transactions allowed on the socket (Modbus TCP transaction ids). */
  maxInFlight: number;
}

/** RTU framing carried through a TCP serial server (one transaction at a time, like a real line). */
export interface RtuOverTcpBusConfig extends BusBasics {
  kind: 'rtu-over-tcp';
  host: string;
  port: number;
  interFrameDelayMs: number;
  /** The serial server returns each request before the reply (local echo): expect and strip it. */
  echo?: boolean;
}

export type BusConfig = (RtuBusConfig | TcpBusConfig | RtuOverTcpBusConfig) & SharedBusSettings;

/** Settings every bus kind shares; the loader fills them, hand-built configs (tests, CLI) may omit the optional ones. */
export interface SharedBusSettings {
  /** Reopen the port when no unit gave a good reply for this long while requests failed. */
  reopenAfterSilenceMs?: number;
  /**
   * RTU framing: after a timeout nothing the unit's late reply could be taken for (same function and
   * reply length) is sent until it was seen or this long has passed (default 10 x timeoutMs), so no
   * late reply can pass for the answer to another request.
   */
  lateReplyGuardMs?: number;
  /** Cloud work (writes, read-backs, cloud reads) waits up to `maxWaitMs` for a guarded or cooling unit. */
  writes?: { maxWaitMs: number };
  /** A Modbus TCP server in front of this bus (docs/share.md); absent: none. */
  share?: ShareConfig;
}

export interface BackoffConfig {
  initialMs: number;
  maxMs: number;
  /** 0..1: fraction of the delay randomised. */
  jitter: number;
}

export interface CooldownConfig {
  /** Consecutive timeouts before a unit is put in cool-down. */
  afterTimeouts: number;
  initialMs: number;
  maxMs: number;
}
