// The `buses` list: one entry per physical line (serial port, TCP peer, or serial server).
import { Fields, joinPath } from './fields.js';
import { describeValue } from './issues.js';
import { readShare } from './share.js';
import type {
  BackoffConfig, BusConfig, ConfigIssue, CooldownConfig, Parity, RtuBusConfig,
} from './site-types.js';

export const BUS_KINDS = ['rtu', 'tcp', 'rtu-over-tcp'] as const;
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const NAME_TEXT = 'must start with a letter or digit and contain only letters, digits, "_", "." and "-"';

/** Documented defaults, shared by every bus kind unless noted. */
export const BUS_DEFAULTS = {
  rtu: { baudRate: 9600, parity: 'even' as Parity, dataBits: 8 as const, stopBits: 1 as const, timeoutMs: 1000 },
  tcp: { port: 502, timeoutMs: 2000, maxInFlight: 1 },
  rtuOverTcp: { timeoutMs: 2000, interFrameDelayMs: 5 },
  reconnect: { initialMs: 500, maxMs: 30_000, jitter: 0.2 } satisfies BackoffConfig,
  cooldown: { afterTimeouts: 3, initialMs: 5_000, maxMs: 60_000 } satisfies CooldownConfig,
  busyRetries: 3,
  reopenAfterSilenceMs: 30_000,
  /** Cloud work waits this long in the queue for a unit guarded against a late reply or cooling down. */
  writes: { maxWaitMs: 30_000 },
};

/** Above 19200 baud the Modbus spec fixes t3.5 at 1.75 ms instead of 3.5 character times. */
export function t35Ms(baudRate: number, dataBits: number, parity: Parity, stopBits: number): number {
  if (baudRate > 19200) return 1.75;
  const bitsPerCharacter = 1 + dataBits + (parity === 'none' ? 0 : 1) + stopBits;
  return (3.5 * bitsPerCharacter * 1000) / baudRate;
}

/**
 * Default inter-frame silence: t3.5 itself (rounded up to the microsecond). The RTU transport
 * keeps it on a monotonic sub-millisecond clock, so it need not be rounded to whole milliseconds.
 */
export function defaultInterFrameDelayMs(baudRate: number, dataBits: number, parity: Parity, stopBits: number): number {
  return Math.ceil(t35Ms(baudRate, dataBits, parity, stopBits) * 1000 - 1e-6) / 1000;
}

function readBackoff(bus: Fields): BackoffConfig | undefined {
  const f = bus.section('reconnect');
  if (!f) return undefined;
  const d = BUS_DEFAULTS.reconnect;
  const initialMs = f.duration('initialMs', { default: d.initialMs, min: 1 });
  const maxMs = f.duration('maxMs', { default: d.maxMs, min: 1 });
  const jitter = f.number('jitter', { default: d.jitter, min: 0, max: 1 });
  f.rejectUnknownKeys();
  if (initialMs !== undefined && maxMs !== undefined && maxMs < initialMs) {
    f.report('maxMs', `must be >= initialMs (${initialMs} ms)`);
    return undefined;
  }
  return initialMs === undefined || maxMs === undefined || jitter === undefined ? undefined : { initialMs, maxMs, jitter };
}

function readWrites(bus: Fields): { maxWaitMs: number } | undefined {
  const f = bus.section('writes');
  if (!f) return undefined;
  const maxWaitMs = f.duration('maxWaitMs', { default: BUS_DEFAULTS.writes.maxWaitMs, min: 0, max: 3_600_000 });
  f.rejectUnknownKeys();
  return maxWaitMs === undefined ? undefined : { maxWaitMs };
}

function readCooldown(bus: Fields): CooldownConfig | undefined {
  const f = bus.section('cooldown');
  if (!f) return undefined;
  const d = BUS_DEFAULTS.cooldown;
  const afterTimeouts = f.integer('afterTimeouts', { default: d.afterTimeouts, min: 1, max: 100 });
  const initialMs = f.duration('initialMs', { default: d.initialMs, min: 1 });
  const maxMs = f.duration('maxMs', { default: d.maxMs, min: 1 });
  f.rejectUnknownKeys();
  if (initialMs !== undefined && maxMs !== undefined && maxMs < initialMs) {
    f.report('maxMs', `must be >= initialMs (${initialMs} ms)`);
    return undefined;
  }
  return afterTimeouts === undefined || initialMs === undefined || maxMs === undefined
    ? undefined
    : { afterTimeouts, initialMs, maxMs };
}

/** What each bus kind has of its own, before the shared reconnect/cool-down settings are added. */
type KindSpecific<T> = T extends unknown ? Omit<T, 'reconnect' | 'cooldown' | 'busyRetries'> : never;

function readRtu(f: Fields, name: string): KindSpecific<RtuBusConfig> | undefined {
  const d = BUS_DEFAULTS.rtu;
  const path = f.string('path');
  const baudRate = f.integer('baudRate', { default: d.baudRate, min: 50, max: 4_000_000 });
  const parity = f.choice('parity', ['none', 'even', 'odd'] as const, { default: d.parity });
  const dataBits = f.choice('dataBits', [7, 8] as const, { default: d.dataBits });
  const stopBits = f.choice('stopBits', [1, 2] as const, { default: d.stopBits });
  const timeoutMs = f.duration('timeoutMs', { default: d.timeoutMs, min: 1, max: 60_000 });
  if (baudRate === undefined || parity === undefined || dataBits === undefined || stopBits === undefined) {
    f.take('interFrameDelayMs');
    return undefined;
  }
  const minimum = t35Ms(baudRate, dataBits, parity, stopBits);
  const interFrameDelayMs = f.duration('interFrameDelayMs', {
    default: defaultInterFrameDelayMs(baudRate, dataBits, parity, stopBits),
  });
  const echo = f.boolean('echo', { default: false });
  if (interFrameDelayMs !== undefined && interFrameDelayMs < minimum) {
    const frame = `${dataBits}${parity[0].toUpperCase()}${stopBits}`;
    f.report('interFrameDelayMs', `must be at least t3.5 = ${Number(minimum.toFixed(3))} ms at ${baudRate} baud ${frame} (got ${interFrameDelayMs} ms)`);
    return undefined;
  }
  if (path === undefined || timeoutMs === undefined || interFrameDelayMs === undefined || echo === undefined) return undefined;
  return { kind: 'rtu', name, path, baudRate, parity, dataBits, stopBits, timeoutMs, interFrameDelayMs, echo };
}

const KIND_KEYS: Record<BusConfig['kind'], readonly string[]> = {
  rtu: ['path', 'baudRate', 'parity', 'dataBits', 'stopBits', 'timeoutMs', 'interFrameDelayMs', 'echo'],
  tcp: ['host', 'port', 'timeoutMs', 'maxInFlight'],
  'rtu-over-tcp': ['host', 'port', 'timeoutMs', 'interFrameDelayMs', 'echo'],
};

/** `path` on a tcp bus is a misplaced setting, not a typo: say which kinds take it. */
function rejectOtherKindKeys(f: Fields, kind: BusConfig['kind']): void {
  const own = new Set(KIND_KEYS[kind]);
  const others = new Set(BUS_KINDS.flatMap((k) => KIND_KEYS[k]).filter((key) => !own.has(key)));
  for (const key of others) {
    if (!f.has(key)) continue;
    f.take(key);
    f.report(key, `only for ${BUS_KINDS.filter((k) => KIND_KEYS[k].includes(key)).join(' and ')} buses (this bus is ${kind})`);
  }
}

const HOST_TEXT = 'must be a host name or IP address';
const HOST_PATTERN = /^[A-Za-z0-9][A-Za-z0-9.:_-]*$/;

function readBus(raw: unknown, path: string, issues: ConfigIssue[]): BusConfig | undefined {
  const f = Fields.of(raw, path, issues);
  if (!f) return undefined;
  const name = f.string('name', { pattern: NAME_PATTERN, patternText: NAME_TEXT, name: true });
  const kind = f.choice('kind', BUS_KINDS, { what: 'bus kind' });
  let specific: KindSpecific<BusConfig> | undefined;
  if (kind === 'rtu') {
    specific = readRtu(f, name ?? '');
  } else if (kind === 'tcp' || kind === 'rtu-over-tcp') {
    const host = f.string('host', { pattern: HOST_PATTERN, patternText: HOST_TEXT });
    const port = f.integer('port', { min: 1, max: 65535, ...(kind === 'tcp' ? { default: BUS_DEFAULTS.tcp.port } : {}) });
    if (kind === 'tcp') {
      const timeoutMs = f.duration('timeoutMs', { default: BUS_DEFAULTS.tcp.timeoutMs, min: 1, max: 60_000 });
      const maxInFlight = f.integer('maxInFlight', { default: BUS_DEFAULTS.tcp.maxInFlight, min: 1, max: 64 });
      if (host !== undefined && port !== undefined && timeoutMs !== undefined && maxInFlight !== undefined) {
        specific = { kind, name: name ?? '', host, port, timeoutMs, maxInFlight };
      }
    } else {
      const d = BUS_DEFAULTS.rtuOverTcp;
      const timeoutMs = f.duration('timeoutMs', { default: d.timeoutMs, min: 1, max: 60_000 });
      const interFrameDelayMs = f.duration('interFrameDelayMs', { default: d.interFrameDelayMs });
      const echo = f.boolean('echo', { default: false });
      if (host !== undefined && port !== undefined && timeoutMs !== undefined && interFrameDelayMs !== undefined && echo !== undefined) {
        specific = { kind, name: name ?? '', host, port, timeoutMs, interFrameDelayMs, echo };
      }
    }
  }
  const reconnect = readBackoff(f);
  const cooldown = readCooldown(f);
  const busyRetries = f.integer('busyRetries', { default: BUS_DEFAULTS.busyRetries, min: 0, max: 20 });
  const reopenAfterSilenceMs = f.duration('reopenAfterSilenceMs', { default: BUS_DEFAULTS.reopenAfterSilenceMs, min: 1000, max: 86_400_000 });
  // Absent = 10 x the bus timeout (the bus applies it, so a per-request timeout scales it too).
  const lateReplyGuardMs = f.duration('lateReplyGuardMs', { min: 1, max: 3_600_000, optional: true });
  // Absent = the defaults of the bus (timeout-repeats.ts, late-guard.ts), like lateReplyGuardMs.
  const lossOptions = readLossOptions(f);
  const writes = readWrites(f);
  const share = readShare(f, kind);
  // Keys of the other kinds are not "unknown" when the kind itself is wrong: one issue is enough.
  if (kind !== undefined) {
    rejectOtherKindKeys(f, kind);
    f.rejectUnknownKeys();
  }
  if (!specific || name === undefined || !reconnect || !cooldown || busyRetries === undefined || reopenAfterSilenceMs === undefined || !writes || share === null) {
    return undefined;
  }
  return {
    ...specific, reconnect, cooldown, busyRetries, reopenAfterSilenceMs, writes, ...(lateReplyGuardMs === undefined ? {} : { lateReplyGuardMs }),
    ...lossOptions, ...(share ? { share } : {}),
  };
}

/** The optional bounds of a lossy line: repeats after a timeout, when "answers late" is forgotten. */
function readLossOptions(f: Fields): Partial<Pick<BusConfig, 'timeoutRepeats' | 'lateSeenForgetAfterAnswers' | 'lateSeenForgetAfterMs'>> {
  const timeoutRepeats = f.integer('timeoutRepeats', { min: 0, max: 5, optional: true });
  const afterAnswers = f.integer('lateSeenForgetAfterAnswers', { min: 1, max: 1_000_000, optional: true });
  const afterMs = f.duration('lateSeenForgetAfterMs', { min: 1000, max: 86_400_000, optional: true });
  return {
    ...(timeoutRepeats === undefined ? {} : { timeoutRepeats }),
    ...(afterAnswers === undefined ? {} : { lateSeenForgetAfterAnswers: afterAnswers }),
    ...(afterMs === undefined ? {} : { lateSeenForgetAfterMs: afterMs }),
  };
}

export interface ReadBuses {
  /** Buses that passed every check. */
  buses: BusConfig[];
  /** Every declared name, valid or not, so devices on a broken bus do not also say "unknown bus". */
  declared: Set<string>;
}

/** Parses every bus and checks names and endpoints are unique; failed entries are left out. */
export function readBuses(list: readonly unknown[], path: string, issues: ConfigIssue[]): ReadBuses {
  const buses: BusConfig[] = [];
  const names = new Map<string, number>();
  const endpoints = new Map<string, string>();
  const shares = new Map<string, string>();
  list.forEach((raw, index) => {
    const itemPath = joinPath(path, index);
    const rawName = (raw as { name?: unknown } | null)?.name;
    const first = typeof rawName === 'string' ? names.get(rawName) : undefined;
    if (first !== undefined) {
      issues.push({ path: `${itemPath}.name`, message: `duplicate bus name ${describeValue(rawName)} (also ${path}[${first}])` });
    } else if (typeof rawName === 'string') {
      names.set(rawName, index);
    }
    const bus = readBus(raw, itemPath, issues);
    if (!bus || first !== undefined) return;
    const endpoint = bus.kind === 'rtu' ? bus.path : `${bus.host}:${bus.port}`;
    const owner = endpoints.get(endpoint);
    if (owner !== undefined) {
      const key = bus.kind === 'rtu' ? 'path' : 'port';
      issues.push({ path: `${itemPath}.${key}`, message: `${endpoint} is already used by bus "${owner}"` });
      return;
    }
    endpoints.set(endpoint, bus.name);
    if (bus.share) {
      const listen = `${bus.share.address}:${bus.share.port}`;
      const shareOwner = shares.get(listen);
      if (shareOwner !== undefined) {
        issues.push({ path: `${itemPath}.share.port`, message: `${listen} is already the share of bus "${shareOwner}"` });
        return;
      }
      shares.set(listen, bus.name);
    }
    buses.push(bus);
  });
  return { buses, declared: new Set(names.keys()) };
}
