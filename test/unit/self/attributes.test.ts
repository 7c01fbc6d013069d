import { describe, expect, it } from 'vitest';
import { discreteState, selfAttributes, statusCommandResult, type SelfSample } from '../../../src/ops/self/attributes.js';
import { bus, gatewayStatus } from './status-fixture.js';
import type { OutboxStorageStatus } from '../../../src/ops/status.js';

const MB = 1024 * 1024;

function sample(at: number, buses = [bus('line1', 100, 4)], extra: Parameters<typeof gatewayStatus>[0] = {}): SelfSample {
  return { status: gatewayStatus({ buses, ...extra }), rssBytes: 42.34 * MB, at };
}

describe('own attributes', () => {
  it('reports identity, devices, buses, links, outbox and memory', () => {
    expect(selfAttributes(sample(1000), sample(0, [bus('line1', 40, 4)]))).toEqual({
      version: '9.9.9', uptime_s: 120, devices_online: 1, devices_total: 2, buses_up: 1, buses_total: 1,
      // 60 good and 0 failed in one second.
      buses: { line1: { up: true, good_per_min: 3600, failed_per_min: 0 } },
      links_up: 1, links_total: 2, rss_mb: 42.3, outbox_reports: 7, outbox_bytes: 2048, outbox_oldest_age_s: 65, outbox_dropped: 1,
    });
  });

  const storageCases: Array<[string, OutboxStorageStatus, Record<string, unknown>]> = [
    ['ok', { state: 'ok', failedWrites: 0, crashWindowHolds: true }, { outbox_storage: 'ok', outbox_crash_safe: true }],
    ['failing', { state: 'failing', cause: 'SQLITE_FULL: database or disk is full', failingForMs: 5000, failedWrites: 6, crashWindowHolds: false }, { outbox_storage: 'failing', outbox_crash_safe: false }],
  ];
  it.each(storageCases)('says whether the outbox storage is %s and whether the crash window holds', (_what, storage, expected) => {
    const outbox = { depth: 7, bytes: 2048, maxBytes: 1 << 20, dropped: 1, oldestAgeMs: 0, storage };
    expect(selfAttributes(sample(0, undefined, { outbox }))).toMatchObject(expected);
    expect(statusCommandResult(sample(0, undefined, { outbox })).outbox).toMatchObject({ storage: storage.state, ...(storage.cause ? { storage_cause: storage.cause } : {}) });
    // A change of the storage state is a change worth a prompt report.
    expect(discreteState(sample(0, undefined, { outbox }).status)).not.toBe(discreteState(sample(0, undefined, { outbox: { ...outbox, storage: { ...storage, state: storage.state === 'ok' ? 'failing' : 'ok' } } }).status));
  });

  // Table: [what, previous buses, current buses, elapsed ms, expected line1 entry]
  const rateCases: Array<[string, ReturnType<typeof bus>[] | undefined, ReturnType<typeof bus>[], number, Record<string, unknown>]> = [
    ['over one minute', [bus('line1', 100, 10)], [bus('line1', 220, 30)], 60_000, { up: true, good_per_min: 100, failed_per_min: 20 }],
    ['over 30 s (doubled)', [bus('line1', 0, 0)], [bus('line1', 15, 5)], 30_000, { up: true, good_per_min: 20, failed_per_min: 10 }],
    ['rounded to a tenth', [bus('line1', 0, 0)], [bus('line1', 1, 0)], 7000, { up: true, good_per_min: 8.6, failed_per_min: 0 }],
    ['a bus that went down keeps its rates', [bus('line1', 10, 0)], [bus('line1', 16, 6, false)], 60_000, { up: false, good_per_min: 0, failed_per_min: 6 }],
    ['counters went backwards (restart): no rate', [bus('line1', 500, 9)], [bus('line1', 10, 1)], 60_000, { up: true }],
    ['no time passed: no rate', [bus('line1', 0, 0)], [bus('line1', 10, 0)], 0, { up: true }],
    ['clock went backwards: no rate', [bus('line1', 0, 0)], [bus('line1', 10, 0)], -5000, { up: true }],
    ['bus new since the last report: no baseline, no rate', [bus('other', 0, 0)], [bus('line1', 10, 0)], 60_000, { up: true }],
  ];
  it.each(rateCases)('bus rates: %s', (_what, before, now, elapsedMs, expected) => {
    const previous = before ? sample(0, before) : undefined;
    const attributes = selfAttributes(sample(elapsedMs, now), previous);
    expect((attributes.buses as Record<string, unknown>).line1).toEqual(expected);
  });

  it('without a previous sample, rates are since start (uptime)', () => {
    const attributes = selfAttributes(sample(0, [bus('line1', 120, 12)], { uptimeS: 60 }));
    expect((attributes.buses as Record<string, unknown>).line1).toEqual({ up: true, good_per_min: 108, failed_per_min: 12 });
  });

  it('counts timeouts and exceptions as failures when a status has no failures field', () => {
    const old = { ...bus('line1', 50, 0), timeouts: 3, exceptions: 2, failures: undefined };
    const attributes = selfAttributes(sample(0, [old], { uptimeS: 60 }));
    expect((attributes.buses as Record<string, unknown>).line1).toEqual({ up: true, good_per_min: 45, failed_per_min: 5 });
  });

  it('leaves the outbox out when there is none, and says 0 s for an empty one', () => {
    expect(selfAttributes(sample(0, undefined, { outbox: null }))).not.toHaveProperty('outbox_reports');
    const empty = selfAttributes(sample(0, undefined, { outbox: { depth: 0, bytes: 0, maxBytes: 1, dropped: 0, oldestAgeMs: null } }));
    expect(empty).toMatchObject({ outbox_reports: 0, outbox_bytes: 0, outbox_oldest_age_s: 0 });
  });

  it('keeps a bus named __proto__ as a plain key', () => {
    const attributes = selfAttributes(sample(0, [bus('__proto__', 10, 0)]));
    expect(JSON.parse(JSON.stringify(attributes)).buses).toHaveProperty('__proto__');
  });
});

describe('discrete state', () => {
  const base = gatewayStatus();
  const cases: Array<[string, ReturnType<typeof gatewayStatus>, boolean]> = [
    ['same status', gatewayStatus(), false],
    ['uptime, counters and outbox change', gatewayStatus({ uptimeS: 999, buses: [bus('line1', 5000, 70)], outbox: null }), false],
    ['a device comes online', gatewayStatus({}, [true, true]), true],
    ['a bus goes down', gatewayStatus({ buses: [bus('line1', 100, 4, false)] }), true],
  ];
  it.each(cases)('%s', (_what, next, changed) => {
    expect(discreteState(next) !== discreteState(base)).toBe(changed);
  });
});

describe('status summary', () => {
  it('is bounded by the number of names it lists', () => {
    const online = Array.from({ length: 5000 }, () => false);
    const summary = statusCommandResult({ status: gatewayStatus({}, online), rssBytes: MB, at: 0 });
    expect(summary.devices).toMatchObject({ online: 0, total: 5000 });
    expect((summary.devices as { offline: string }).offline).toMatch(/ and 4980 more$/);
    expect(JSON.stringify(summary).length).toBeLessThan(2000);
  });
});

describe('own attributes: the site file running', () => {
  const config = (generation: number, lastError: string | null) => ({ generation, sha256: 'f'.repeat(64), loadedAt: '2026-01-01T00:05:00.000Z', lastError, reloads: { applied: generation - 1, unchanged: 0, refused: lastError ? 1 : 0, failed: 0 } });

  it('reports generation, digest, load time and the refusal (empty when none)', () => {
    expect(selfAttributes(sample(0, undefined, { config: config(2, null) }))).toMatchObject({
      config_generation: 2, config_sha256: 'f'.repeat(64), config_loaded_at: '2026-01-01T00:05:00.000Z', config_error: '',
    });
    expect(selfAttributes(sample(0, undefined, { config: config(2, 'gateway.stateDir: cannot change') })).config_error).toBe('gateway.stateDir: cannot change');
    expect(Object.keys(selfAttributes(sample(0))).some((k) => k.startsWith('config_'))).toBe(false);
  });

  it('an applied or refused reload is a change worth reporting', () => {
    const base = gatewayStatus({ config: config(1, null) });
    expect(discreteState(gatewayStatus({ config: config(1, null) }))).toBe(discreteState(base));
    expect(discreteState(gatewayStatus({ config: config(2, null) }))).not.toBe(discreteState(base));
    expect(discreteState(gatewayStatus({ config: config(1, 'refused') }))).not.toBe(discreteState(base));
  });
});
