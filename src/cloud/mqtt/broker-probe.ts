// A cheap reachability probe of the broker while a link waits out a long reconnect delay: a TCP
// connect (no TLS, no MQTT) every `everyMs`, one per broker address however many links wait on
// it, so a broker back from an outage is reached within about `everyMs` instead of after up to
// `reconnect.maxMs`. Only used after network-level failures: a broker that answers and refuses
// keeps its full backoff.
import { connect } from 'node:net';
import type { Time } from '../../core/time.js';

/** Default ports of the broker URL schemes. */
const DEFAULT_PORTS: Record<string, number> = { 'mqtt:': 1883, 'mqtts:': 8883, 'ws:': 80, 'wss:': 443 };

export interface ProbeTarget {
  host: string;
  port: number;
}

export function probeTargetOf(url: string): ProbeTarget | undefined {
  try {
    const parsed = new URL(url);
    const port = parsed.port === '' ? DEFAULT_PORTS[parsed.protocol] : Number(parsed.port);
    return port === undefined ? undefined : { host: parsed.hostname.replace(/^\[|\]$/g, ''), port };
  } catch {
    return undefined;
  }
}

/** Resolves true when a TCP connection to the target opens within `timeoutMs` (then closed at once). */
export function tcpReachable(target: ProbeTarget, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: target.host, port: target.port });
    const done = (ok: boolean) => {
      socket.removeAllListeners();
      socket.on('error', () => undefined);
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

interface Shared {
  waiters: Set<() => void>;
  cancel: () => void;
}

/** One probe loop per broker address, shared by every link waiting on it. */
export class BrokerProbes {
  private readonly loops = new Map<string, Shared>();

  constructor(private readonly time: Time, private readonly reachable: (target: ProbeTarget, timeoutMs: number) => Promise<boolean> = tcpReachable) {}

  /** Calls `onReachable` once, when the target accepts a TCP connection; returns a cancel. */
  watch(target: ProbeTarget, everyMs: number, onReachable: () => void): () => void {
    const key = `${target.host}:${target.port}`;
    let shared = this.loops.get(key);
    if (!shared) {
      const created: Shared = { waiters: new Set(), cancel: () => undefined };
      this.loops.set(key, created);
      this.loop(key, created, target, everyMs);
      shared = created;
    }
    const waiter = () => onReachable();
    shared.waiters.add(waiter);
    const owner = shared;
    return () => {
      owner.waiters.delete(waiter);
      if (owner.waiters.size === 0) this.stop(key, owner);
    };
  }

  private loop(key: string, shared: Shared, target: ProbeTarget, everyMs: number): void {
    shared.cancel = this.time.setTimer(() => {
      void this.reachable(target, Math.max(100, Math.min(everyMs, 5000))).then((ok) => {
        if (this.loops.get(key) !== shared) return;
        if (!ok) {
          this.loop(key, shared, target, everyMs);
          return;
        }
        this.stop(key, shared);
        for (const waiter of [...shared.waiters]) waiter();
      });
    }, everyMs, { unref: true });
  }

  private stop(key: string, shared: Shared): void {
    shared.cancel();
    if (this.loops.get(key) === shared) this.loops.delete(key);
  }
}

const byClock = new WeakMap<Time, BrokerProbes>();

/** The probes of one clock: the links of a process (one system clock) share one loop per broker address. */
export function sharedProbes(time: Time): BrokerProbes {
  let probes = byClock.get(time);
  if (!probes) {
    probes = new BrokerProbes(time);
    byClock.set(time, probes);
  }
  return probes;
}
