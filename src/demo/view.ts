// The demo's live view as text (pure): per device the gateway's values next to the cloud's.
import { formatTable } from '../cli/status.js';
import type { GatewayStatus } from '../ops/status.js';

export interface RoundTrip {
  label: string;
  at: string;
  ok: boolean;
  detail: string;
  latencyMs: number;
}

export interface DemoFrame {
  status: GatewayStatus;
  /** Device -> latest values the gateway polled. */
  gateway: Record<string, Record<string, unknown>>;
  /** Device -> the cloud's values read back through interface B (undefined: not read yet). */
  cloud: Record<string, Record<string, unknown> | undefined>;
  roundTrips: RoundTrip[];
  endpoints: string[];
  /** Devices that reach the cloud through fieldgate's identity link (gateway mode). */
  viaGateway?: readonly string[];
  /** What the demo's own dashboard received on the cloud's app-side subscription, per kind. */
  appSide?: { endpoint: string; counts: Record<string, number>; latest: Partial<Record<string, string>>; error: string | undefined };
  /** The gateway's latest log events as readable lines, and how many there were in all. */
  events?: { latest: readonly string[]; total: number };
}

function show(value: unknown): string {
  if (value === undefined) return '-';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : value.toFixed(2);
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function renderFrame(frame: DemoFrame): string {
  const { status } = frame;
  const lines = [`fieldgate demo: ${status.devices.length} simulated devices -> cloud emulator   (Ctrl-C stops)`, ...frame.endpoints, ''];
  for (const device of status.devices) {
    const sub = frame.viaGateway?.includes(device.name) === true;
    const link = status.links.find((l) => l.device === device.name);
    const outbox = status.outbox?.depth ?? 0;
    const gatewayLink = status.links.find((l) => l.device === '@fieldgate');
    const via = sub ? `via gateway identity, link ${gatewayLink?.state ?? 'none'}` : `link ${link?.state ?? 'none'}, ${link?.publishes ?? 0} reports acked`;
    lines.push(`${device.name} on ${device.bus}: ${device.online ? 'online' : 'OFFLINE'}, ${via}, outbox ${outbox}`);
    const mine = frame.gateway[device.name] ?? {};
    const theirs = frame.cloud[device.name];
    const keys = [...new Set([...Object.keys(mine), ...Object.keys(theirs ?? {})])].sort();
    const rows = keys.map((k) => [k, show(mine[k]), theirs === undefined ? '(reading)' : show(theirs[k])]);
    lines.push(formatTable(['  ATTRIBUTE', 'GATEWAY', 'CLOUD (interface B)'], rows.map(([k, a, b]) => [`  ${k}`, a, b])), '');
  }
  if (frame.roundTrips.length > 0) {
    lines.push('round trips through the cloud:');
    for (const r of frame.roundTrips.slice(-4)) lines.push(`  ${r.at} ${r.label}: ${r.ok ? 'ok' : 'FAILED'} in ${r.latencyMs} ms, ${r.detail}`);
  }
  const app = frame.appSide;
  if (app) {
    lines.push(`app-side subscription (${app.endpoint})${app.error ? `: ${app.error}` : ''}:`);
    for (const [kind, count] of Object.entries(app.counts)) lines.push(`  ${kind.padEnd(13)} ${String(count).padStart(5)}${app.latest[kind] ? `  latest ${app.latest[kind]}` : ''}`);
  }
  const events = frame.events;
  if (events && events.latest.length > 0) {
    const older = events.total - events.latest.length;
    lines.push(`gateway events${older > 0 ? ` (latest ${events.latest.length} of ${events.total})` : ''}:`, ...events.latest.map((e) => `  ${e}`));
  }
  return `${lines.join('\n')}\n`;
}
