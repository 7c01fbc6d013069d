// Late replies are visible: per unit in /status (from the bus's stats) and in /metrics.
import { describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../../../src/ops/metrics.js';
import { busStatusOf } from '../../../src/ops/status-assembly.js';
import type { GatewayStatus } from '../../../src/ops/status.js';
import type { BusStats } from '../../../src/field/modbus/bus-stats.js';

const stats: BusStats = {
  bus: 'line1', state: 'up', queueDepth: 0, inFlight: 0, transactions: 40, timeouts: 5, timeoutRepeats: 0, exceptions: 0, busyRetries: 0,
  frameErrors: 0, otherErrors: 0, cooldownRejects: 0, downRejects: 0, queueRejects: 0, cancelled: 0, expired: 0, busyTimeMs: 100, reconnects: 0,
  unitsCoolingDown: 0, goodReplies: 35, discardedReplies: 4, silenceReopens: 0, lateReplies: 4, lateGuardRejects: 3,
  lateUnits: [{ unit: 2, lateReplies: 3, slowestAnswerMs: 1012, guardedUntil: 5 }, { unit: 7, lateReplies: 1, slowestAnswerMs: 480 }],
};

describe('late replies in /status and /metrics', () => {
  it('lists each unit that answered late with its count and slowest answer time', () => {
    expect(busStatusOf(stats, 'rtu', 10_000)).toMatchObject({
      lateReplies: 4,
      lateUnits: [{ unit: 2, lateReplies: 3, slowestAnswerMs: 1012 }, { unit: 7, lateReplies: 1, slowestAnswerMs: 480 }],
    });
  });

  it('counts them per bus and unit in fieldgate_bus_late_replies_total', async () => {
    const status: GatewayStatus = {
      version: 't', startedAt: '', uptimeS: 10, buses: [busStatusOf(stats, 'rtu', 10_000)], devices: [], links: [], outbox: null, rateQueue: null,
    };
    const text = await createMetricsRegistry(() => status).metrics();
    expect(text).toContain('fieldgate_bus_late_replies_total{bus="line1",unit="2"} 3');
    expect(text).toContain('fieldgate_bus_late_replies_total{bus="line1",unit="7"} 1');
  });
});
