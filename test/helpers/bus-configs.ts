// Bus configs for tests, with every default filled in as ops/site-file.ts would.
import type { RtuBusConfig, SharedBusSettings, TcpBusConfig } from '../../src/core/config/site-types.js';

export function rtuBusConfig(overrides: Partial<RtuBusConfig> & SharedBusSettings = {}): RtuBusConfig & SharedBusSettings {
  return {
    kind: 'rtu',
    name: 'line1',
    path: '/dev/null',
    baudRate: 19200,
    parity: 'even',
    dataBits: 8,
    stopBits: 1,
    timeoutMs: 200,
    interFrameDelayMs: 5,
    reconnect: { initialMs: 100, maxMs: 1000, jitter: 0 },
    cooldown: { afterTimeouts: 2, initialMs: 5000, maxMs: 20000 },
    busyRetries: 3,
    ...overrides,
  };
}

export function tcpBusConfig(overrides: Partial<TcpBusConfig> & SharedBusSettings = {}): TcpBusConfig & SharedBusSettings {
  return {
    kind: 'tcp',
    name: 'plc',
    host: '127.0.0.1',
    port: 502,
    timeoutMs: 200,
    maxInFlight: 1,
    reconnect: { initialMs: 100, maxMs: 1000, jitter: 0 },
    cooldown: { afterTimeouts: 2, initialMs: 5000, maxMs: 20000 },
    busyRetries: 3,
    ...overrides,
  };
}
