// A bus's optional `share:` block: a Modbus TCP server that lets other masters (SCADA, an energy
// manager, a vendor tool) reach the line through fieldgate's own scheduler (docs/share.md).
import { Fields, isMapping, joinPath } from './fields.js';
import { describeValue } from './issues.js';
import type { BusConfig, ConfigIssue } from './site-types.js';
import { SHARE_FUNCTIONS, SHARE_TABLES, type ShareConfig, type ShareRange, type ShareUnitPolicy } from './share-types.js';

export { SHARE_FUNCTIONS, SHARE_TABLES, type ShareConfig, type ShareRange, type ShareTable, type ShareUnitPolicy } from './share-types.js';

export const SHARE_DEFAULTS = {
  address: '127.0.0.1', access: 'read-only' as const, maxClients: 8, idleTimeoutMs: 60_000,
  ratePerSecond: 50, queueDepth: 8, maxQueued: 64, maxQueueWaitMs: 5000, lineShare: 0.25, cacheMs: 0, allowBroadcast: false,
  /** Modbus over serial line V1.02 §2.4.1: the turnaround delay is typically 100 to 200 ms. */
  broadcastTurnaroundMs: 100,
};

/**
 * Share requests in the bus at once (all clients together, `maxQueued`) stay within half the bus
 * queue (DEFAULT_QUEUE_LIMIT 1000 in field/modbus/bus.ts), so polls and writes always find room.
 */
export const MAX_SHARE_QUEUED = 500;

type BusKind = BusConfig['kind'];

const ADDRESS_PATTERN = /^[A-Za-z0-9.:_-]+$/;

function isLoopback(address: string): boolean {
  return address === 'localhost' || address === '::1' || /^127\.\d+\.\d+\.\d+$/.test(address);
}

/** The share of a bus whose listen address is not loopback and that accepts writes: `validate` says so. */
export function shareExposureWarning(share: ShareConfig): string | undefined {
  if (isLoopback(share.address) || share.access !== 'read-write') return undefined;
  return `listens on ${share.address}:${share.port} and forwards writes: anyone who reaches that address can write to the devices`;
}

function unitId(value: unknown, min: number): number | undefined {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= min && n <= 255 ? n : undefined;
}

function readUnits(f: Fields): ShareConfig['units'] | null {
  const raw = f.take('units');
  if (raw === undefined) return undefined;
  if (!isMapping(raw)) {
    f.report('units', `must be a mapping of TCP unit id to bus unit id (got ${describeValue(raw)})`);
    return null;
  }
  const units: NonNullable<ShareConfig['units']> = [];
  let ok = true;
  for (const [key, value] of Object.entries(raw)) {
    const tcp = unitId(key, 0);
    const bus = unitId(value, 1);
    const path = joinPath(f.at('units'), key);
    if (tcp === undefined) {
      f.issues.push({ path, message: `TCP unit id must be an integer 0..255 (got ${describeValue(key)})` });
      ok = false;
    } else if (bus === undefined || bus > 247) {
      f.issues.push({ path, message: `bus unit id must be an integer 1..247 (got ${describeValue(value)})` });
      ok = false;
    } else {
      units.push({ tcp, bus });
    }
  }
  return ok ? units.sort((a, b) => a.tcp - b.tcp) : null;
}

function readRange(raw: unknown, path: string, issues: ConfigIssue[]): ShareRange | undefined {
  const f = Fields.of(raw, path, issues);
  if (!f) return undefined;
  const table = f.choice('table', SHARE_TABLES, { optional: true });
  const from = f.integer('from', { min: 0, max: 65535 });
  const to = f.integer('to', { min: 0, max: 65535 });
  f.rejectUnknownKeys();
  if (from !== undefined && to !== undefined && to < from) {
    f.report('to', `must be >= from (${from})`);
    return undefined;
  }
  if (from === undefined || to === undefined || (f.has('table') && table === undefined)) return undefined;
  return { ...(table ? { table } : {}), from, to };
}

function readUnitPolicy(raw: unknown, path: string, issues: ConfigIssue[]): ShareUnitPolicy | undefined {
  const f = Fields.of(raw, path, issues);
  if (!f) return undefined;
  let ok = true;
  const functionList = f.has('functions') ? f.list('functions') : undefined;
  const functions: number[] = [];
  functionList?.forEach((code, index) => {
    if (!(SHARE_FUNCTIONS as readonly unknown[]).includes(code)) {
      issues.push({ path: joinPath(f.at('functions'), index), message: `must be one of ${SHARE_FUNCTIONS.join(', ')} (got ${describeValue(code)})` });
      ok = false;
    } else functions.push(code as number);
  });
  const rangeList = f.has('ranges') ? f.list('ranges') : undefined;
  const ranges = rangeList?.map((r, index) => readRange(r, joinPath(f.at('ranges'), index), issues));
  f.rejectUnknownKeys();
  if (!ok || (f.has('functions') && !functionList) || (f.has('ranges') && !rangeList) || ranges?.some((r) => r === undefined)) return undefined;
  return { ...(functionList ? { functions } : {}), ...(ranges ? { ranges: ranges as ShareRange[] } : {}) };
}

function readPolicy(f: Fields): ShareConfig['policy'] | null {
  const raw = f.take('policy');
  if (raw === undefined) return undefined;
  if (!isMapping(raw)) {
    f.report('policy', `must be a mapping of TCP unit id to its allow-lists (got ${describeValue(raw)})`);
    return null;
  }
  const policy: NonNullable<ShareConfig['policy']> = [];
  let ok = true;
  for (const [key, value] of Object.entries(raw)) {
    const path = joinPath(f.at('policy'), key);
    const unit = unitId(key, 0);
    if (unit === undefined) {
      f.issues.push({ path, message: `TCP unit id must be an integer 0..255 (got ${describeValue(key)})` });
      ok = false;
      continue;
    }
    const rules = readUnitPolicy(value, path, f.issues);
    if (rules) policy.push({ unit, ...rules });
    else ok = false;
  }
  return ok ? policy.sort((a, b) => a.unit - b.unit) : null;
}

/** `allowBroadcast` only where a broadcast exists and means one thing (docs/share.md). */
function checkBroadcast(f: Fields, kind: BusKind | undefined, allow: boolean | undefined, access: ShareConfig['access'] | undefined,
  units: ShareConfig['units'] | null): boolean {
  if (allow !== true) {
    if (allow === false && f.has('broadcastTurnaroundMs')) f.report('broadcastTurnaroundMs', 'only used with allowBroadcast: true');
    return !f.has('broadcastTurnaroundMs') || allow === undefined;
  }
  let ok = true;
  if (kind === 'tcp') {
    f.report('allowBroadcast', 'a Modbus TCP bus has no broadcast (unit 0 is not "every unit" there): only rtu and rtu-over-tcp buses can broadcast');
    ok = false;
  }
  if (access === 'read-only') {
    f.report('allowBroadcast', 'needs access: read-write (a broadcast is always a write)');
    ok = false;
  }
  if (units?.some((u) => u.tcp === 0)) {
    f.issues.push({ path: joinPath(f.at('units'), '0'), message: 'TCP unit 0 is the broadcast while allowBroadcast is true: map it to a unit or allow broadcast, not both' });
    ok = false;
  }
  return ok;
}

/** The bus's `share:` block; undefined when absent, null (with issues) when invalid. */
export function readShare(bus: Fields, kind?: BusKind): ShareConfig | undefined | null {
  if (!bus.has('share')) {
    bus.take('share');
    return undefined;
  }
  const f = bus.section('share');
  if (!f) return null;
  const d = SHARE_DEFAULTS;
  const port = f.integer('port', { min: 1, max: 65535 });
  const address = f.string('address', { default: d.address, pattern: ADDRESS_PATTERN, patternText: 'must be an IP address or host name' });
  const units = readUnits(f);
  const access = f.choice('access', ['read-only', 'read-write'] as const, { default: d.access });
  const policy = readPolicy(f);
  const maxClients = f.integer('maxClients', { default: d.maxClients, min: 1, max: 1000 });
  const idleTimeoutMs = f.duration('idleTimeoutMs', { default: d.idleTimeoutMs, min: 100, max: 86_400_000 });
  const ratePerSecond = f.number('ratePerSecond', { default: d.ratePerSecond, min: 0.1, max: 10_000 });
  const queueDepth = f.integer('queueDepth', { default: d.queueDepth, min: 1, max: 256 });
  const maxQueued = f.integer('maxQueued', { default: d.maxQueued, min: 1, max: MAX_SHARE_QUEUED });
  const maxQueueWaitMs = f.duration('maxQueueWaitMs', { default: d.maxQueueWaitMs, min: 10, max: 600_000 });
  const lineShare = f.number('lineShare', { default: d.lineShare, min: 0.01, max: 1 });
  const cacheMs = f.duration('cacheMs', { default: d.cacheMs, min: 0, max: 3_600_000 });
  const timeoutMs = f.duration('timeoutMs', { min: 1, max: 60_000, optional: true });
  const allowBroadcast = f.boolean('allowBroadcast', { default: d.allowBroadcast });
  const broadcastTurnaroundMs = f.duration('broadcastTurnaroundMs', { default: d.broadcastTurnaroundMs, min: 1, max: 10_000 });
  f.rejectUnknownKeys();
  const broadcastOk = checkBroadcast(f, kind, allowBroadcast, access, units);
  if (port === undefined || address === undefined || units === null || access === undefined
    || policy === null || maxClients === undefined || idleTimeoutMs === undefined || ratePerSecond === undefined
    || queueDepth === undefined || maxQueued === undefined || maxQueueWaitMs === undefined || lineShare === undefined || cacheMs === undefined || (f.has('timeoutMs') && timeoutMs === undefined)
    || allowBroadcast === undefined || broadcastTurnaroundMs === undefined || !broadcastOk) {
    return null;
  }
  return {
    address, port, access, maxClients, idleTimeoutMs, ratePerSecond, queueDepth, maxQueued, maxQueueWaitMs, lineShare, cacheMs, allowBroadcast, broadcastTurnaroundMs,
    ...(units ? { units } : {}), ...(policy ? { policy } : {}), ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };
}
