// What /metrics and `fieldgate status` make of the shares in a status snapshot.
import { describe, expect, it } from 'vitest';
import { formatStatus } from '../../../src/cli/status.js';
import { createMetricsRegistry } from '../../../src/ops/metrics.js';
import type { GatewayStatus } from '../../../src/ops/status.js';

const STATUS: GatewayStatus = {
  version: 't', startedAt: '', uptimeS: 0, buses: [], devices: [], links: [], outbox: null, rateQueue: null,
  shares: [{
    bus: 'meters', listen: '127.0.0.1:1502', state: 'listening', access: 'read-only', clients: 2, refusedConnections: 3,
    requests: 40, forwarded: 20, fromCache: 12, refusedByPolicy: 4, busy: 3, failed: 1, cancelled: 2, queued: 5, queueWaitMs: { p50: 12, p99: 85 },
  }],
};

describe('share status', () => {
  it('is exported as metrics per bus and outcome', async () => {
    const text = await createMetricsRegistry(() => STATUS).metrics();
    expect(text).toContain('fieldgate_share_clients{bus="meters"} 2');
    expect(text).toContain('fieldgate_share_requests_total{bus="meters",outcome="forwarded"} 20');
    expect(text).toContain('fieldgate_share_requests_total{bus="meters",outcome="fromCache"} 12');
    expect(text).toContain('fieldgate_share_requests_total{bus="meters",outcome="refusedByPolicy"} 4');
    expect(text).toContain('fieldgate_share_refused_connections_total{bus="meters"} 3');
    expect(text).toContain('fieldgate_share_queue_wait_seconds{bus="meters",quantile="0.99"} 0.085');
  });

  it('is a table in fieldgate status, and absent without shares', () => {
    expect(formatStatus(STATUS)).toMatch(/meters\s+127\.0\.0\.1:1502\s+listening\s+2\s+20\s+12\s+4\s+3\s+1\s+12ms\/85ms/);
    expect(formatStatus({ ...STATUS, shares: undefined })).not.toContain('SHARE');
  });
});
