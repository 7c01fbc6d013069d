// Per-device `streams` block: custom data streams (`data/<identifier>/set`) and where their bytes go.
import { isReservedName, reservedNameMessage } from './reserved-names.js';
import type { StreamConfig, StreamTarget } from './command-types.js';
import { Fields, isMapping, joinPath } from './fields.js';
import { describeValue } from './issues.js';
import type { BusConfig } from './site-types.js';

const STREAM_PATTERN = /^[A-Za-z0-9_]+$/;

export const STREAM_DEFAULTS = { quietMs: 50, replyTimeoutMs: 1000, maxReplyBytes: 4096 };

const HOST_PORT = /^([A-Za-z0-9.-]+):(\d{1,5})$/;

/** `tcp: "host:port"` or `tcp: { host, port }`. */
function readTcpTarget(f: Fields): StreamTarget | undefined {
  if (isMapping(f.peek('tcp'))) {
    const t = f.section('tcp');
    const host = t?.string('host', { pattern: /^[A-Za-z0-9.-]+$/, patternText: 'must be a host name or IPv4 address' });
    const port = t?.integer('port', { min: 1, max: 65535 });
    t?.rejectUnknownKeys();
    return host !== undefined && port !== undefined ? { kind: 'tcp', host, port } : undefined;
  }
  const raw = f.take('tcp');
  const m = typeof raw === 'string' ? HOST_PORT.exec(raw) : null;
  const port = m ? Number(m[2]) : NaN;
  if (!m || port < 1 || port > 65535) {
    f.report('tcp', `must be "host:port" or { host, port } (got ${describeValue(raw)})`);
    return undefined;
  }
  return { kind: 'tcp', host: m[1], port };
}

function readTarget(f: Fields, buses: ReadonlyMap<string, BusConfig>): StreamTarget | undefined {
  const kinds = ['serial', 'tcp', 'bus'].filter((k) => f.has(k));
  if (kinds.length !== 1) {
    f.issues.push({ path: f.path, message: 'needs exactly one target: serial, tcp or bus' });
    for (const k of ['serial', 'tcp', 'bus']) f.take(k);
    return undefined;
  }
  if (kinds[0] === 'bus') {
    const name = f.string('bus');
    const bus = name === undefined ? undefined : buses.get(name);
    if (name !== undefined && !bus) f.report('bus', `unknown bus ${describeValue(name)}: must name an rtu bus`);
    else if (bus && bus.kind !== 'rtu') f.report('bus', `must name an rtu bus ("${bus.name}" is ${bus.kind})`);
    return name !== undefined && bus?.kind === 'rtu' ? { kind: 'bus', bus: name } : undefined;
  }
  if (kinds[0] === 'tcp') return readTcpTarget(f);
  const s = f.section('serial');
  if (!s) return undefined;
  const path = s.string('path');
  const baudRate = s.integer('baudRate', { default: 9600, min: 50, max: 4_000_000 });
  const parity = s.choice('parity', ['none', 'even', 'odd'] as const, { default: 'none' });
  const dataBits = s.choice('dataBits', [7, 8] as const, { default: 8 });
  const stopBits = s.choice('stopBits', [1, 2] as const, { default: 1 });
  s.rejectUnknownKeys();
  const modbusPath = [...buses.values()].find((b) => b.kind === 'rtu' && b.path === path);
  if (modbusPath) s.report('path', `is the port of Modbus bus "${modbusPath.name}": use \`bus: ${modbusPath.name}\` to share the line`);
  if (path === undefined || baudRate === undefined || parity === undefined || dataBits === undefined || stopBits === undefined || modbusPath) return undefined;
  return { kind: 'serial', path, baudRate, parity, dataBits, stopBits };
}

export function readStreams(device: Fields, buses: ReadonlyMap<string, BusConfig>): StreamConfig[] {
  const raw = device.take('streams');
  if (raw === undefined) return [];
  const path = device.at('streams');
  if (!isMapping(raw)) {
    device.issues.push({ path, message: `must be a mapping of identifier -> target (got ${describeValue(raw)})` });
    return [];
  }
  const streams: StreamConfig[] = [];
  for (const [identifier, body] of Object.entries(raw)) {
    const at = joinPath(path, identifier || '""');
    const valid = STREAM_PATTERN.test(identifier) && !isReservedName(identifier);
    if (!STREAM_PATTERN.test(identifier)) device.issues.push({ path: at, message: 'stream identifiers contain only letters, digits and "_"' });
    else if (!valid) device.issues.push({ path: at, message: reservedNameMessage(identifier) });
    const f = Fields.of(body, at, device.issues);
    if (!f) continue;
    const target = readTarget(f, buses);
    const quietMs = f.duration('quietMs', { default: STREAM_DEFAULTS.quietMs, min: 1, max: 10_000 });
    const replyTimeoutMs = f.duration('replyTimeoutMs', { default: STREAM_DEFAULTS.replyTimeoutMs, min: 1, max: 60_000 });
    const maxReplyBytes = f.integer('maxReplyBytes', { default: STREAM_DEFAULTS.maxReplyBytes, min: 1, max: 1_048_576 });
    f.rejectUnknownKeys();
    if (target && quietMs !== undefined && replyTimeoutMs !== undefined && maxReplyBytes !== undefined && valid) {
      streams.push({ identifier, target, quietMs, replyTimeoutMs, maxReplyBytes });
    }
  }
  return streams;
}
