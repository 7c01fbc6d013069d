import { afterEach, describe, expect, it } from 'vitest';
import { startHealthServer, type HealthServer } from '../../../src/ops/health.js';
import { silentLogger } from '../../../src/ops/log.js';
import { unhealthyReasons, type GatewayStatus } from '../../../src/ops/status.js';

function status(overrides: Partial<GatewayStatus> = {}): GatewayStatus {
  return {
    version: '0.1.0',
    startedAt: '2026-11-22T00:00:00.000Z',
    uptimeS: 12,
    buses: [{ name: 'line1', kind: 'rtu', up: true, transactions: 120, timeouts: 3, exceptions: 1, queueDepth: 2, utilisation: 0.42 }],
    devices: [{ name: 'meter-1', bus: 'line1', online: true, points: 12, lastPollAgeMs: 500, skippedCycles: 4 }],
    links: [{ device: 'meter-1', state: 'up', reconnects: 2, publishes: 77 }],
    outbox: { depth: 5, bytes: 900, maxBytes: 10_000, dropped: 0 },
    rateQueue: { pending: 1, rateLimited: 3, waits: 2, rejected: 0 },
    ...overrides,
  };
}

describe('health endpoint', () => {
  let server: HealthServer | undefined;
  afterEach(async () => server?.close());

  it('serves /healthz 200, /status JSON and Prometheus /metrics on loopback', async () => {
    const snap = status();
    server = await startHealthServer({ port: 0, snapshot: () => snap, stalledLoops: () => [], logger: silentLogger() });
    const base = `http://127.0.0.1:${server.port}`;
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ healthy: true, reasons: [] });
    expect(await (await fetch(`${base}/status`)).json()).toEqual(snap);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('fieldgate_bus_transactions_total{bus="line1"} 120');
    expect(metrics).toContain('fieldgate_bus_utilisation_ratio{bus="line1"} 0.42');
    expect(metrics).toContain('fieldgate_device_online{device="meter-1",bus="line1"} 1');
    expect(metrics).toContain('fieldgate_device_last_poll_age_seconds{device="meter-1"} 0.5');
    expect(metrics).toContain('fieldgate_link_reconnects_total{device="meter-1"} 2');
    expect(metrics).toContain('fieldgate_outbox_depth 5');
    expect(metrics).toContain('fieldgate_rate_queue_rate_limited_total 3');
    expect(metrics).toContain('fieldgate_process_resident_memory_bytes');
    expect((await fetch(`${base}/nope`)).status).toBe(404);
  });

  it('answers 503 with reasons when a bus is down or a loop is stalled', async () => {
    const snap = status({ buses: [{ ...status().buses[0], up: false }] });
    server = await startHealthServer({ port: 0, snapshot: () => snap, stalledLoops: () => ['poller line1'], logger: silentLogger() });
    const res = await fetch(`http://127.0.0.1:${server.port}/healthz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ healthy: false, reasons: ['bus line1 is down', 'poller line1 made no progress'] });
  });
});

describe('outbox storage and drops in /metrics', () => {
  let server: HealthServer | undefined;
  afterEach(async () => server?.close());

  it('exports the storage state, failed writes and drops per device', async () => {
    const snap = status({
      outbox: {
        depth: 40, bytes: 4000, maxBytes: 10_000, dropped: 7, droppedByDevice: { fast: 6, slow: 1 },
        storage: { state: 'failing', cause: 'SQLITE_IOERR_WRITE: disk I/O error', failingForMs: 1000, failedWrites: 12, crashWindowHolds: false },
        reads: { state: 'failing', cause: 'SQLITE_IOERR_READ: disk I/O error', failingForMs: 1000, failedReads: 5 },
      },
    });
    server = await startHealthServer({ port: 0, snapshot: () => snap, stalledLoops: () => [], logger: silentLogger() });
    const metrics = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
    expect(metrics).toMatch(/^fieldgate_outbox_storage_ok 0$/m);
    expect(metrics).toMatch(/^fieldgate_outbox_storage_failed_writes_total 12$/m);
    expect(metrics).toMatch(/^fieldgate_outbox_reads_ok 0$/m);
    expect(metrics).toMatch(/^fieldgate_outbox_failed_reads_total 5$/m);
    expect(metrics).toMatch(/^fieldgate_outbox_device_dropped_total\{device="fast"\} 6$/m);
    expect(metrics).toMatch(/^fieldgate_outbox_device_dropped_total\{device="slow"\} 1$/m);
    const health = await fetch(`http://127.0.0.1:${server.port}/healthz`);
    expect(health.status).toBe(503);
  });
});

describe('unhealthyReasons', () => {
  it.each([
    ['healthy', status(), [], []],
    ['all devices offline', status({ devices: [{ ...status().devices[0], online: false }] }), [], ['no device is online']],
    ['outbox full', status({ outbox: { depth: 9, bytes: 10_000, maxBytes: 10_000, dropped: 4 } }), [], ['outbox is full and dropping reports']],
    ['no devices configured is not a fault', status({ devices: [] }), [], []],
    ['outbox storage ok', status({ outbox: { depth: 1, bytes: 90, maxBytes: 10_000, dropped: 0, storage: { state: 'ok', failedWrites: 3, crashWindowHolds: true } } }), [], []],
    ['outbox storage failing', status({ outbox: { depth: 1, bytes: 90, maxBytes: 10_000, dropped: 0, storage: { state: 'failing', cause: 'SQLITE_FULL: database or disk is full', failingForMs: 9000, failedWrites: 9, crashWindowHolds: false } } }), [],
      ['outbox storage failing (SQLITE_FULL: database or disk is full): reports kept in memory only, no crash window holds']],
    ['outbox reads failing', status({ outbox: { depth: 1, bytes: 90, maxBytes: 10_000, dropped: 0, reads: { state: 'failing', cause: 'SQLITE_IOERR_READ: disk I/O error', failingForMs: 3000, failedReads: 4 } } }), [],
      ['outbox reads failing (SQLITE_IOERR_READ: disk I/O error): devices with reports on disk wait, retried with backoff']],
  ])('%s', (_name, snap, stalled, expected) => {
    expect(unhealthyReasons(snap, stalled)).toEqual(expected);
  });
});
