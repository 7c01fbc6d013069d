// The reporter against the shared outbox fake (the outbox itself has its own tests).
import { describe, expect, it } from 'vitest';
import type { OutboxRecord, OutboxStats, ReportOutbox } from '../../src/core/outbox-types.js';
import { silentLogger } from '../../src/ops/log.js';
import { asEpoch, asMono } from '../../src/core/time.js';
import { Reporter } from '../../src/device/reporter.js';
import { deviceConfig, pointConfig } from '../helpers/device-configs.js';
import { FakeOutbox } from '../helpers/fake-outbox.js';

/** What was appended, with each payload parsed as the JSON the reporter wrote. */
function appendedBodies(outbox: FakeOutbox): Array<{ device: string; body: unknown; ts: number }> {
  return outbox.appended.map(({ device, payload, ts }) => ({ device, body: JSON.parse(payload), ts }));
}

const always = { mode: 'always' as const, deadband: 0, deadbandKind: 'absolute' as const, maxSilenceMs: 0 };
const points = [pointConfig({ id: 'v', address: 0, report: always })];

describe('Reporter', () => {
  it('writes nothing to the outbox for a device without a cloud identity, but keeps its values', () => {
    const outbox = new FakeOutbox();
    const reporter = new Reporter([deviceConfig({ name: 'local', points })], outbox, silentLogger(), { now: () => asMono(5), wallNow: () => asEpoch(5) });
    reporter.onDeviceState('local', 'online', 'ok', asEpoch(5));
    reporter.onSample({ device: 'local', ts: asEpoch(100), at: asMono(100), values: { v: 7 }, errors: [] });
    reporter.onConfirmedValues('local', { v: 8 });
    expect(outbox.appended).toEqual([]);
    expect(reporter.latest('local')).toEqual({ v: 8 });
    expect(reporter.isOnline('local')).toBe(true);
    expect(reporter.lastSampleAt('local')).toBe(100);
  });

  it('keeps the latest values as a plain record would (key order, offline forgets them), and a returned record is a copy', () => {
    const change = { ...always, mode: 'change' as const };
    const device = deviceConfig({ name: 'd', points: [pointConfig({ id: 'b', address: 0, report: change }), pointConfig({ id: '10', address: 1, report: change }), pointConfig({ id: 'a', address: 2, report: change })], cloud: { accessToken: 't', allowCreate: false } });
    const outbox = new FakeOutbox();
    const reporter = new Reporter([device], outbox, silentLogger(), { now: () => asMono(5), wallNow: () => asEpoch(5) });
    reporter.onDeviceState('d', 'online', 'ok', asEpoch(1));
    reporter.onSample({ device: 'd', ts: asEpoch(1), at: asMono(1), values: { b: 1, 10: 2 }, errors: [] });
    reporter.onSample({ device: 'd', ts: asEpoch(2), at: asMono(2), values: { a: 3, b: 4 }, errors: [] });
    const held = reporter.latest('d');
    expect(Object.entries(held)).toEqual([['10', 2], ['b', 4], ['a', 3]]);
    reporter.onDeviceState('d', 'offline', 'timeout', asEpoch(2));
    expect(reporter.latest('d')).toEqual({});
    expect(held).toEqual({ 10: 2, b: 4, a: 3 });
    // Back online: the filter forgot what it sent, so an unchanged value goes out again.
    reporter.onDeviceState('d', 'online', 'ok', asEpoch(1));
    reporter.onSample({ device: 'd', ts: asEpoch(3), at: asMono(3), values: { b: 4 }, errors: [] });
    expect(appendedBodies(outbox).map((r) => r.body)).toEqual([{ online: true }, { b: 1, 10: 2 }, { a: 3, b: 4 }, { online: false }, { online: true }, { b: 4 }]);
  });

  it('keeps the poll time with each report and adds it as an attribute when configured', () => {
    const outbox = new FakeOutbox();
    const devices = [
      deviceConfig({ name: 'plain', points, cloud: { accessToken: 't', allowCreate: false } }),
      deviceConfig({ name: 'stamped', points, cloud: { accessToken: 't', allowCreate: false, timestampAttribute: 'ts' } }),
    ];
    const reporter = new Reporter(devices, outbox, silentLogger(), { now: () => asMono(999), wallNow: () => asEpoch(999) });
    reporter.onSample({ device: 'plain', ts: asEpoch(100), at: asMono(100), values: { v: 1 }, errors: [] });
    reporter.onSample({ device: 'stamped', ts: asEpoch(200), at: asMono(200), values: { v: 2 }, errors: [] });
    reporter.onDeviceState('stamped', 'offline', 'timeout', asEpoch(999));
    expect(appendedBodies(outbox)).toEqual([
      { device: 'plain', body: { v: 1 }, ts: 100 },
      { device: 'stamped', body: { v: 2, ts: 200 }, ts: 200 },
      { device: 'stamped', body: { online: false, ts: 999 }, ts: 999 },
    ]);
  });
});
