// Prometheus metrics built from a status snapshot at scrape time (the only importer of prom-client).
// Loaded by the health endpoint at the first /metrics request, so a box nobody scrapes never loads it.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { NO_LOOP_DELAY, type LoopDelaySampler, type LoopDelaySummary } from './loop-delay.js';
import type { GatewayStatus } from './status.js';

type Snapshot = () => GatewayStatus;

/** The longest period a Node timer takes: prom-client's own 10 ms event-loop sampler, parked. */
const PARKED_SAMPLER_MS = 0x7fffffff;

/** prom-client's histogram-based lag gauges, replaced by the same names fed by LoopDelaySampler. */
const LAG_STATS = ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99'] as const;

function loopDelayGauges(registry: Registry, read: () => LoopDelaySummary): void {
  const help: Record<(typeof LAG_STATS)[number], string> = {
    min: 'The minimum', max: 'The maximum', mean: 'The mean', stddev: 'The standard deviation',
    p50: 'The 50th percentile', p90: 'The 90th percentile', p99: 'The 99th percentile',
  };
  for (const stat of LAG_STATS) {
    const name = `fieldgate_nodejs_eventloop_lag_${stat}_seconds`;
    registry.removeSingleMetric(name);
    new Gauge({
      name, help: `${help[stat]} event-loop delay since the last scrape (s), sampled by one timer per gateway.health.eventLoopSampleMs; NaN without a sample.`,
      registers: [registry],
      collect() {
        this.set(read()[stat]);
      },
    });
  }
}

/** `sampler`: the event-loop delay behind the lag gauges; without one they read NaN. */
export function createMetricsRegistry(snapshot: Snapshot, sampler?: LoopDelaySampler): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'fieldgate_', eventLoopMonitoringPrecision: PARKED_SAMPLER_MS });
  let current: GatewayStatus | undefined;
  let lag: LoopDelaySummary | undefined;
  // One snapshot per scrape, shared by every metric below; the loop delay likewise, since the last scrape.
  const view = (): GatewayStatus => (current ??= snapshot());
  loopDelayGauges(registry, () => {
    if (!lag) {
      lag = sampler?.summary() ?? NO_LOOP_DELAY;
      sampler?.reset();
    }
    return lag;
  });

  const counter = (name: string, help: string, labelNames: string[], read: (s: GatewayStatus, set: (labels: Record<string, string>, v: number) => void) => void) =>
    new Counter({
      name, help, labelNames, registers: [registry],
      collect() {
        this.reset();
        read(view(), (labels, v) => this.inc(labels, v));
      },
    });
  const gauge = (name: string, help: string, labelNames: string[], read: (s: GatewayStatus, set: (labels: Record<string, string>, v: number) => void) => void) =>
    new Gauge({
      name, help, labelNames, registers: [registry],
      collect() {
        this.reset();
        read(view(), (labels, v) => this.set(labels, v));
      },
    });

  gauge('fieldgate_up', 'Always 1 while the process serves metrics; resets the per-scrape snapshot.', [], (_s, set) => set({}, 1));
  // The release a fleet tells apart: package.json's version, the commit count and short hash (scripts/package.sh).
  gauge('fieldgate_build_info', 'Always 1; its version label names the build that runs (base version, commit count, short hash; .dirty when built from uncommitted changes).', ['version'], (s, set) => set({ version: s.version }, 1));
  counter('fieldgate_bus_transactions_total', 'Modbus transactions completed per bus.', ['bus'], (s, set) => s.buses.forEach((b) => set({ bus: b.name }, b.transactions)));
  counter('fieldgate_bus_timeouts_total', 'Modbus requests that timed out per bus.', ['bus'], (s, set) => s.buses.forEach((b) => set({ bus: b.name }, b.timeouts)));
  counter('fieldgate_bus_exceptions_total', 'Modbus exception replies per bus.', ['bus'], (s, set) => s.buses.forEach((b) => set({ bus: b.name }, b.exceptions)));
  counter('fieldgate_bus_discarded_replies_total', 'Received frames that were not exactly the awaited reply (late, duplicate, foreign, malformed), never decoded.', ['bus'], (s, set) => s.buses.forEach((b) => set({ bus: b.name }, b.discardedReplies ?? 0)));
  counter('fieldgate_bus_late_replies_total', 'Replies that came after their request timed out, per unit (RTU framing; discarded, never decoded).', ['bus', 'unit'],
    (s, set) => s.buses.forEach((b) => b.lateUnits?.forEach((u) => set({ bus: b.name, unit: String(u.unit) }, u.lateReplies))));
  counter('fieldgate_bus_silence_reopens_total', 'Ports reopened because no unit gave a good reply for reopenAfterSilenceMs.', ['bus'], (s, set) => s.buses.forEach((b) => set({ bus: b.name }, b.silenceReopens ?? 0)));
  gauge('fieldgate_bus_queue_depth', 'Requests waiting for the line.', ['bus'], (s, set) => s.buses.forEach((b) => set({ bus: b.name }, b.queueDepth)));
  gauge('fieldgate_bus_utilisation_ratio', 'Fraction of time the line was busy.', ['bus'], (s, set) => s.buses.forEach((b) => set({ bus: b.name }, b.utilisation)));
  gauge('fieldgate_bus_up', '1 when the bus port is open.', ['bus'], (s, set) => s.buses.forEach((b) => set({ bus: b.name }, b.up ? 1 : 0)));
  gauge('fieldgate_device_online', '1 when the device answers its polls.', ['device', 'bus'], (s, set) => s.devices.forEach((d) => set({ device: d.name, bus: d.bus }, d.online ? 1 : 0)));
  gauge('fieldgate_device_last_poll_age_seconds', 'Seconds since the last successful poll (-1 before the first).', ['device'], (s, set) => s.devices.forEach((d) => set({ device: d.name }, d.lastPollAgeMs === null ? -1 : d.lastPollAgeMs / 1000)));
  gauge('fieldgate_device_points', 'Configured points per device.', ['device'], (s, set) => s.devices.forEach((d) => set({ device: d.name }, d.points)));
  counter('fieldgate_device_skipped_cycles_total', 'Poll cycles skipped because the previous one overran.', ['device'], (s, set) => s.devices.forEach((d) => set({ device: d.name }, d.skippedCycles)));
  // Per device, not per point: point names stay in /status, so the label set stays small.
  gauge('fieldgate_device_failing_points', 'Points the device answers for without a value.', ['device'], (s, set) => s.devices.forEach((d) => set({ device: d.name }, d.failingPoints?.length ?? 0)));
  counter('fieldgate_device_point_failures_total', 'Times a point of the device started failing.', ['device'], (s, set) => s.devices.forEach((d) => set({ device: d.name }, d.pointFailures ?? 0)));
  gauge('fieldgate_device_learned_limits', 'Read-plan splits and isolated points learned from the device.', ['device'], (s, set) => s.devices.forEach((d) => set({ device: d.name }, d.learned?.length ?? 0)));
  gauge('fieldgate_device_overrunning', '1 while the device\'s poll cycles overrun their period.', ['device'], (s, set) => s.devices.forEach((d) => set({ device: d.name }, d.overrunning ? 1 : 0)));
  gauge('fieldgate_link_up', '1 when the device MQTT link is connected.', ['device'], (s, set) => s.links.forEach((l) => set({ device: l.device }, l.state === 'up' ? 1 : 0)));
  counter('fieldgate_link_reconnects_total', 'MQTT reconnects per device link.', ['device'], (s, set) => s.links.forEach((l) => set({ device: l.device }, l.reconnects)));
  counter('fieldgate_link_publishes_total', 'Publishes acknowledged per device link.', ['device'], (s, set) => s.links.forEach((l) => set({ device: l.device }, l.publishes)));
  gauge('fieldgate_outbox_depth', 'Reports waiting in the outbox.', [], (s, set) => s.outbox && set({}, s.outbox.depth));
  gauge('fieldgate_outbox_bytes', 'Bytes held by the outbox.', [], (s, set) => s.outbox && set({}, s.outbox.bytes));
  gauge('fieldgate_outbox_disk_reports', 'Reports of the outbox held on disk.', [], (s, set) => s.outbox?.onDisk !== undefined && set({}, s.outbox.onDisk));
  gauge('fieldgate_outbox_oldest_age_seconds', 'Age of the oldest report in the outbox by poll time (0 when empty).', [], (s, set) => s.outbox?.oldestAgeMs !== undefined && set({}, (s.outbox.oldestAgeMs ?? 0) / 1000));
  counter('fieldgate_outbox_dropped_total', 'Reports dropped (outbox full, a failed last write, rows of a corrupt file, failed checksums, their device left the site); kept across restarts in the outbox file.', [], (s, set) => s.outbox && set({}, s.outbox.dropped));
  counter('fieldgate_outbox_device_dropped_total', 'Reports dropped per device (caps, failed writes, lost rows, checksums, device removed); kept across restarts.', ['device'], (s, set) => Object.entries(s.outbox?.droppedByDevice ?? {}).forEach(([device, n]) => set({ device }, n)));
  gauge('fieldgate_outbox_storage_ok', '1 while the outbox file takes writes; 0 while reports are in memory only (no crash window).', [], (s, set) => s.outbox?.storage && set({}, s.outbox.storage.state === 'ok' ? 1 : 0));
  gauge('fieldgate_outbox_reads_ok', '1 while the outbox file can be read; 0 while devices with reports on disk wait for a read.', [], (s, set) => s.outbox?.reads && set({}, s.outbox.reads.state === 'ok' ? 1 : 0));
  counter('fieldgate_outbox_failed_reads_total', 'Outbox disk reads that failed (each retried with backoff).', [], (s, set) => s.outbox?.reads && set({}, s.outbox.reads.failedReads));
  counter('fieldgate_outbox_storage_failed_writes_total', 'Outbox writes (commits, deletes) that failed: disk full, read-only, I/O error, corrupt file.', [], (s, set) => s.outbox?.storage && set({}, s.outbox.storage.failedWrites));
  gauge('fieldgate_rate_queue_pending', 'Cloud HTTP calls waiting in the rate queue.', [], (s, set) => s.rateQueue && set({}, s.rateQueue.pending));
  counter('fieldgate_rate_queue_rate_limited_total', 'HTTP 429 answers from the cloud.', [], (s, set) => s.rateQueue && set({}, s.rateQueue.rateLimited));
  counter('fieldgate_rate_queue_waits_total', 'Times the queue paused for Retry-After or low remaining quota.', [], (s, set) => s.rateQueue && set({}, s.rateQueue.waits));
  counter('fieldgate_rate_queue_rejected_total', 'Calls rejected because the queue was full.', [], (s, set) => s.rateQueue && set({}, s.rateQueue.rejected));

  gauge('fieldgate_config_generation', 'Site file generation running: 1 at start, +1 per applied reload.', [], (s, set) => s.config && set({}, s.config.generation));
  counter('fieldgate_config_reloads_total', 'Reload attempts by outcome (applied, unchanged, refused, failed: applying failed and was rolled back).', ['outcome'], (s, set) => {
    if (s.config) for (const [outcome, n] of Object.entries(s.config.reloads)) set({ outcome }, n);
  });
  gauge('fieldgate_config_last_reload_refused', '1 while the last reload attempt was refused or failed (status config.lastError).', [], (s, set) => s.config && set({}, s.config.lastError === null ? 0 : 1));

  gauge('fieldgate_share_clients', 'Clients connected to a bus share.', ['bus'], (s, set) => s.shares?.forEach((x) => set({ bus: x.bus }, x.clients)));
  counter('fieldgate_share_requests_total', 'Requests of a bus share by outcome (forwarded to the bus, answered from cache, refused by policy, answered busy, forwarded and failed, forwarded and cancelled: the client left).', ['bus', 'outcome'], (s, set) => s.shares?.forEach((x) => {
    for (const outcome of ['forwarded', 'fromCache', 'refusedByPolicy', 'busy', 'failed', 'cancelled'] as const) set({ bus: x.bus, outcome }, x[outcome]);
  }));
  gauge('fieldgate_share_queued', 'Requests of a bus share in the bus now, waiting or on the line (at most its maxQueued).', ['bus'], (s, set) => s.shares?.forEach((x) => set({ bus: x.bus }, x.queued)));
  counter('fieldgate_share_refused_connections_total', 'Connections a bus share closed at once (maxClients connected).', ['bus'], (s, set) => s.shares?.forEach((x) => set({ bus: x.bus }, x.refusedConnections)));
  gauge('fieldgate_share_queue_wait_seconds', 'Queue wait of forwarded share requests over the last 1024 (p50, p99).', ['bus', 'quantile'], (s, set) => s.shares?.forEach((x) => {
    if (x.queueWaitMs.p50 !== undefined) set({ bus: x.bus, quantile: '0.5' }, x.queueWaitMs.p50 / 1000);
    if (x.queueWaitMs.p99 !== undefined) set({ bus: x.bus, quantile: '0.99' }, x.queueWaitMs.p99 / 1000);
  }));

  const metrics = registry.metrics.bind(registry);
  registry.metrics = async () => {
    current = undefined;
    lag = undefined;
    try {
      return await metrics();
    } finally {
      current = undefined;
      lag = undefined;
    }
  };
  return registry;
}
