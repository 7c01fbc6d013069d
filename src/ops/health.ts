// Local operator endpoint on 127.0.0.1 only: /healthz, /metrics (Prometheus), /status (JSON).
// The metrics library and its samplers start at the first /metrics request: an unscraped box pays
// neither their memory nor their wake-ups.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { systemTimers } from '../core/time.js';
import type { Logger } from './log.js';
import { LoopDelaySampler, monotonicTime } from './loop-delay.js';
import { unhealthyReasons, type GatewayStatus } from './status.js';

/** Event-loop delay sampling period of /metrics when the site file sets none (ms). */
export const DEFAULT_EVENT_LOOP_SAMPLE_MS = 1000;

export interface HealthServerOptions {
  port: number;
  snapshot: () => GatewayStatus;
  /** Names of loops (pollers, links) that stopped making progress. */
  stalledLoops: () => string[];
  logger: Logger;
  /** Period of the event-loop delay sampler behind /metrics (ms); each sample wakes the process once. */
  eventLoopSampleMs?: number;
}

export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  let sampler: LoopDelaySampler | undefined;
  let registry: Promise<Registry> | undefined;
  const metricsRegistry = (): Promise<Registry> => (registry ??= import('./metrics.js').then(({ createMetricsRegistry }) => {
    sampler = new LoopDelaySampler(monotonicTime(systemTimers.setTimer), options.eventLoopSampleMs ?? DEFAULT_EVENT_LOOP_SAMPLE_MS);
    return createMetricsRegistry(options.snapshot, sampler);
  }));
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET') return send(405, 'text/plain', 'method not allowed\n');
    try {
      if (path === '/healthz') {
        const reasons = unhealthyReasons(options.snapshot(), options.stalledLoops());
        return send(reasons.length === 0 ? 200 : 503, 'application/json', JSON.stringify({ healthy: reasons.length === 0, reasons }));
      }
      if (path === '/status') return send(200, 'application/json', JSON.stringify(options.snapshot()));
      if (path === '/metrics') {
        metricsRegistry().then(async (r) => ({ type: r.contentType, text: await r.metrics() })).then(
          ({ type, text }) => send(200, type, text),
          (err: unknown) => {
            options.logger.error({ err }, 'metrics collection failed');
            send(500, 'text/plain', 'metrics collection failed\n');
          },
        );
        return;
      }
      send(404, 'text/plain', 'not found: try /healthz, /metrics or /status\n');
    } catch (err) {
      options.logger.error({ err, path }, 'health endpoint failed');
      send(500, 'text/plain', 'internal error\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Loopback only: the endpoint is for someone on the box and for a local scraper.
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  options.logger.info({ port }, 'health endpoint listening');
  return {
    port,
    close: () => new Promise<void>((resolve) => {
      sampler?.close();
      server.close(() => resolve());
    }),
  };
}
