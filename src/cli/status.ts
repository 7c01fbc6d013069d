// `fieldgate status`: the running daemon's /status endpoint as tables, for someone on the box.
import { parseArgs } from 'node:util';
import type { GatewayStatus, LearnedLimit } from '../ops/status.js';
import { EXIT_CONFIG, EXIT_UNAVAILABLE, EXIT_USAGE, type CliCommand, wantsHelp } from './io.js';
import { SERVICE_ENV_FILE, SERVICE_SITE_FILE, statusPort } from './status-port.js';

/** Left-aligned text table (pure). */
export function formatTable(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, c) => Math.max(...cells.map((r) => (r[c] ?? '').length)));
  return cells.map((r) => r.map((v, c) => v.padEnd(widths[c])).join('  ').trimEnd()).join('\n');
}

function age(ms: number | null): string {
  if (ms === null) return 'never';
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.round(ms / 1000)}s`;
}

function describeLearned(l: LearnedLimit): string {
  if (l.kind === 'split') return `no read across ${l.address}`;
  if (l.kind === 'isolated') return `point ${l.point ?? '?'} (${l.address}) read alone`;
  return `reads of at most ${l.count}`;
}

/** Failing points and learned read limits, only where there are some. */
function pointSections(s: GatewayStatus): string[] {
  const parts: string[] = [];
  const failing = s.devices.flatMap((d) => (d.failingPoints ?? []).map((p) => [d.name, p.point, `${p.table} ${p.address}`, p.message]));
  if (failing.length > 0) parts.push('', formatTable(['DEVICE', 'FAILING POINT', 'ADDRESS', 'ERROR'], failing));
  const learned = s.devices.flatMap((d) => (d.learned ?? []).map((l) => [
    d.name, l.table, describeLearned(l), l.reason,
  ]));
  if (learned.length > 0) parts.push('', formatTable(['DEVICE', 'TABLE', 'LEARNED', 'REASON'], learned));
  // Only the devices whose model is in doubt: another model (not polled) or unverified.
  const models = s.devices.flatMap((d) => (d.identification && d.identification.state !== 'identified'
    ? [[d.name, d.identification.profiles.join(' + '), d.identification.state === 'other-model' ? `OTHER MODEL${d.identification.identifiedAs?.length ? ` (${d.identification.identifiedAs.join(' or ')})` : ''}` : 'unverified', d.identification.detail ?? '']]
    : []));
  if (models.length > 0) parts.push('', formatTable(['DEVICE', 'PROFILE', 'IDENTIFIES AS', 'DETAIL'], models));
  return parts;
}

/** The site file running: generation, digest, when loaded, and a refused reload if the last one was. */
function formatConfig(c: NonNullable<GatewayStatus['config']>): string[] {
  const reloads = `${c.reloads.applied} applied, ${c.reloads.unchanged} unchanged, ${c.reloads.refused} refused, ${c.reloads.failed} failed`;
  const line = `site file: generation ${c.generation}, sha256 ${c.sha256.slice(0, 12)}, loaded ${c.loadedAt}; reloads: ${reloads}`;
  const lines = c.lastError === null ? [line] : [line, `LAST RELOAD REFUSED: ${c.lastError}`];
  if (c.site) {
    const awaiting = c.site.state === 'awaiting_confirm' ? ' AWAITING CONFIRMATION' : '';
    lines.push(`site generation ${c.site.generation}${awaiting}: ${c.site.file} (${c.site.reason})`);
    if (c.site.lastRollback !== '') lines.push(`last rollback: ${c.site.lastRollback}`);
  }
  return lines;
}

export function formatStatus(s: GatewayStatus): string {
  const parts = [`fieldgate ${s.version}, up ${Math.round(s.uptimeS)}s since ${s.startedAt}`];
  if (s.config) parts.push(...formatConfig(s.config));
  parts.push('', formatTable(['BUS', 'KIND', 'STATE', 'TRANSACTIONS', 'TIMEOUTS', 'EXCEPTIONS', 'QUEUE', 'BUSY'],
    s.buses.map((b) => [b.name, b.kind, b.up ? 'up' : 'DOWN', b.transactions, b.timeouts, b.exceptions, b.queueDepth, `${Math.round(b.utilisation * 100)}%`])));
  parts.push('', formatTable(['DEVICE', 'BUS', 'STATE', 'POINTS', 'FAILING', 'LAST POLL', 'SKIPPED'],
    s.devices.map((d) => [d.name, d.bus, d.online ? 'online' : 'OFFLINE', d.points, d.failingPoints?.length ?? 0, age(d.lastPollAgeMs),
      d.overrunning ? `${d.skippedCycles} (overrunning)` : d.skippedCycles])));
  for (const b of s.buses) if (b.echoProblem) parts.push(`bus ${b.name}: ${b.echoProblem}`);
  parts.push(...pointSections(s));
  if (s.links.length > 0) {
    parts.push('', formatTable(['LINK', 'STATE', 'RECONNECTS', 'PUBLISHES'], s.links.map((l) => [l.device, l.state, l.reconnects, l.publishes])));
  }
  if (s.outbox) parts.push('', formatOutbox(s.outbox));
  if (s.shares) parts.push('', formatShares(s.shares));
  if (s.rateQueue) parts.push(`cloud API queue: ${s.rateQueue.pending} pending, ${s.rateQueue.rateLimited} rate-limited, ${s.rateQueue.rejected} rejected`);
  return `${parts.join('\n')}\n`;
}

function formatShares(shares: NonNullable<GatewayStatus['shares']>): string {
  const ms = (v: number | undefined) => (v === undefined ? '-' : `${Math.round(v)}ms`);
  return formatTable(['SHARE', 'LISTEN', 'STATE', 'CLIENTS', 'FORWARDED', 'FROM CACHE', 'REFUSED', 'BUSY', 'FAILED', 'WAIT P50/P99'],
    shares.map((x) => [x.bus, x.listen, x.state === 'failed' ? `FAILED: ${x.error ?? ''}` : x.state, x.clients, x.forwarded, x.fromCache,
      x.refusedByPolicy, x.busy, x.failed, `${ms(x.queueWaitMs.p50)}/${ms(x.queueWaitMs.p99)}`]));
}

function formatOutbox(o: NonNullable<GatewayStatus['outbox']>): string {
  const where = o.onDisk === undefined ? '' : ` (${o.onDisk} on disk, ${o.inMemory ?? 0} not yet)`;
  const oldest = o.oldestAgeMs === undefined || o.oldestAgeMs === null ? '' : `, oldest ${age(o.oldestAgeMs)}`;
  const line = `outbox${o.mode ? ` (${o.mode})` : ''}: ${o.depth} reports${where}, ${o.bytes} of ${o.maxBytes} bytes, ${o.dropped} dropped${oldest}`;
  const dropped = Object.entries(o.droppedByDevice ?? {}).map(([device, n]) => `${device} ${n}`).join(', ');
  const storage = o.storage?.state === 'failing'
    ? `\noutbox storage FAILING for ${age(o.storage.failingForMs ?? 0)}: ${o.storage.cause ?? 'unknown cause'}; reports in memory only, no crash window holds`
    : '';
  return `${line}${dropped ? `\ndropped by device: ${dropped}` : ''}${storage}`;
}

const USAGE = `usage: fieldgate status [--port N] [--config SITE] [--env-file FILE] [--json]
  --port N          health port of the running daemon
  --config SITE     site file to take the port from (default FIELDGATE_CONFIG, else ${SERVICE_SITE_FILE})
  --env-file FILE   environment file of the service (default ${SERVICE_ENV_FILE})
  --json            print /status as JSON
Without --port, the port is the one the running service published (/run/fieldgate/health.json,
readable by every user), unless --config or --env-file is given; else FIELDGATE_HEALTH_PORT (this shell's,
else the environment file's), else gateway.health.port in the site file, else 9180.
`;

export const runStatus: CliCommand = async (args, io) => {
  if (wantsHelp(args)) {
    io.stdout.write(USAGE);
    return 0;
  }
  let values;
  try {
    values = parseArgs({ args, options: { port: { type: 'string' }, config: { type: 'string', short: 'c' }, 'env-file': { type: 'string' }, json: { type: 'boolean' } }, strict: true }).values;
  } catch (err) {
    io.stderr.write(`fieldgate status: ${(err as Error).message}\n${USAGE}`);
    return EXIT_USAGE;
  }
  const choice = statusPort({ port: values.port, config: values.config, envFile: values['env-file'] }, io.env);
  if (!choice.ok) {
    io.stderr.write(`fieldgate status: ${choice.message}\n`);
    return values.port === undefined ? EXIT_CONFIG : EXIT_USAGE;
  }
  const { port } = choice;
  try {
    const res = await fetch(`http://127.0.0.1:${port}/status`, { signal: AbortSignal.timeout(5000) });
    const status = (await res.json()) as GatewayStatus;
    io.stdout.write(values.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status));
    return 0;
  } catch (err) {
    const notes = choice.notes.length > 0 ? `; ${choice.notes.join('; ')}` : '';
    // fetch says only "fetch failed"; the cause says why (ECONNREFUSED, ...).
    const cause = (err as Error).cause;
    const why = cause instanceof Error ? Reflect.get(cause, 'code') ?? cause.message : (err as Error).message;
    io.stderr.write(`fieldgate status: cannot reach the daemon on 127.0.0.1:${port} (port from ${choice.from}${notes}): ${String(why)}; is it running with the health endpoint on?\n`);
    return EXIT_UNAVAILABLE;
  }
};
