/** The documented defaults of the numeric cloud settings (docs/site-file.md). */
export const CLOUD_DEFAULTS = {
  keepaliveS: 120, connectTimeoutMs: 10_000, httpTimeoutMs: 10_000, drainMs: 3000, syncPeriodMs: 600_000, publishWindow: 50, replayRatePerS: 200, maxInboundBytes: 262_144,
  mode: 'direct', gatewayBatchMaxBytes: 65_536, gatewayBatchLingerMs: 100,
  inbound: { maxKeys: 1000, maxPending: 64, busShare: 0.5, unknownAddressesLogged: 256 },
  reconnect: { initialMs: 1000, maxMs: 60_000, jitter: 0.3, probeMs: 2000 },
  outbox: { maxBytes: 67_108_864, commitIntervalMs: 50, mode: 'memory-first', durableAfterMs: 1000, progressLogMs: 10_000, storageRetryMs: 1000, condemnAfterMs: 60_000, recordOverheadBytes: 450 },
  rateQueue: { ratePerS: 5, concurrency: 2, maxPending: 200, retries: 3 },
};
