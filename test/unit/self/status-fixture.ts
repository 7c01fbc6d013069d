// Gateway status snapshots for the own-identity tests.
import type { BusStatus, GatewayStatus } from '../../../src/ops/status.js';

export function bus(name: string, transactions: number, failures: number, up = true): BusStatus {
  return { name, kind: 'rtu', up, transactions, timeouts: failures, exceptions: 0, failures, queueDepth: 0, utilisation: 0.25 };
}

export function gatewayStatus(overrides: Partial<GatewayStatus> = {}, online: readonly boolean[] = [true, false]): GatewayStatus {
  return {
    version: '9.9.9',
    startedAt: '2026-01-01T00:00:00.000Z',
    uptimeS: 120.7,
    buses: [bus('line1', 100, 4)],
    devices: online.map((on, i) => ({ name: `meter-${i + 1}`, bus: 'line1', online: on, points: 3, lastPollAgeMs: 10, skippedCycles: 0 })),
    links: [{ device: 'meter-1', state: 'up', reconnects: 0, publishes: 5 }, { device: 'meter-2', state: 'down', reconnects: 1, publishes: 0 }],
    outbox: { depth: 7, bytes: 2048, maxBytes: 1 << 20, dropped: 1, oldestAgeMs: 65_432 },
    rateQueue: null,
    ...overrides,
  };
}
