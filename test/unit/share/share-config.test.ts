// The `share:` block of a bus: defaults, explicit policy, and the exposure warning of `validate`.
import { describe, expect, it } from 'vitest';
import { validateSite } from '../../../src/core/config/site.js';
import { shareExposureWarning, type ShareConfig } from '../../../src/core/config/share.js';

function shareOf(share: unknown): ShareConfig | undefined {
  const result = validateSite({ buses: [{ name: 'l', kind: 'rtu', path: '/dev/ttyS0', share }], devices: [] });
  expect(result.issues).toEqual([]);
  return result.site!.buses[0].share;
}

describe('share config', () => {
  it('is absent unless configured', () => {
    const result = validateSite({ buses: [{ name: 'l', kind: 'rtu', path: '/dev/ttyS0' }], devices: [] });
    expect(result.site!.buses[0].share).toBeUndefined();
  });

  it('fills the defaults around a bare port: loopback, read-only, cache off', () => {
    expect(shareOf({ port: 1502 })).toEqual({
      address: '127.0.0.1', port: 1502, access: 'read-only', maxClients: 8, idleTimeoutMs: 60_000,
      ratePerSecond: 50, queueDepth: 8, maxQueued: 64, maxQueueWaitMs: 5000, lineShare: 0.25, cacheMs: 0, allowBroadcast: false, broadcastTurnaroundMs: 100,
    });
  });

  it.each(['rtu', 'rtu-over-tcp'])('allows broadcast on a %s bus, with its turnaround', (kind) => {
    const where = kind === 'rtu' ? { path: '/dev/ttyS0' } : { host: '127.0.0.1', port: 4001 };
    const result = validateSite({
      buses: [{ name: 'l', kind, ...where, share: { port: 1502, access: 'read-write', allowBroadcast: true, broadcastTurnaroundMs: '250ms' } }], devices: [],
    });
    expect(result.issues).toEqual([]);
    expect(result.site!.buses[0].share).toMatchObject({ allowBroadcast: true, broadcastTurnaroundMs: 250 });
  });

  it('reads units, per-unit allow-lists and durations', () => {
    const share = shareOf({
      port: 1502, address: '0.0.0.0', access: 'read-write', units: { 10: 1, '11': 2 }, cacheMs: '2s', timeoutMs: 300,
      policy: { 10: { functions: [3, 6], ranges: [{ table: 'holding', from: 0, to: 9 }, { from: 100, to: 100 }] } },
    });
    expect(share).toMatchObject({
      address: '0.0.0.0', access: 'read-write', cacheMs: 2000, timeoutMs: 300,
      units: [{ tcp: 10, bus: 1 }, { tcp: 11, bus: 2 }],
      policy: [{ unit: 10, functions: [3, 6], ranges: [{ table: 'holding', from: 0, to: 9 }, { from: 100, to: 100 }] }],
    });
  });

  it.each([
    [{ address: '127.0.0.1', access: 'read-write' }, false],
    [{ address: '0.0.0.0', access: 'read-only' }, false],
    [{ address: '0.0.0.0', access: 'read-write' }, true],
    [{ address: '192.168.1.5', access: 'read-write' }, true],
    [{ address: '::1', access: 'read-write' }, false],
  ])('warns of a non-loopback share that writes: %o -> %s', (keys, warns) => {
    const share = shareOf({ port: 1502, ...keys })!;
    expect(shareExposureWarning(share) !== undefined).toBe(warns);
  });
});
