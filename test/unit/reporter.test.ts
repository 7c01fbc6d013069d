// The reporter against a recording outbox (a fake: the outbox itself has its own tests).
import { describe, expect, it } from 'vitest';
import type { OutboxRecord, OutboxStats, ReportOutbox } from '../../src/core/outbox-types.js';
import { silentLogger } from '../../src/ops/log.js';
import { Reporter } from '../../src/device/reporter.js';
import { deviceConfig, pointConfig } from '../helpers/device-configs.js';

class RecordingOutbox implements ReportOutbox {
  readonly appended: Array<{ device: string; body: unknown; ts: number }> = [];
  append(device: string, payload: Buffer | string, ts: number): void {
    this.appended.push({ device, body: JSON.parse(payload.toString()), ts });
  }
  peek(): OutboxRecord[] {
    return [];
  }
  ack(): number {
    return 0;
  }
  stats(): OutboxStats {
    return { devices: {}, depth: 0, bytes: 0, dropped: 0, buffered: 0, onDisk: 0, diskBytes: 0, oldestTs: undefined };
  }
  devicesWithBacklog(): string[] {
    return [];
  }
  flush(): void {}
  close(): void {}
}

const always = { mode: 'always' as const, deadband: 0, deadbandKind: 'absolute' as const, maxSilenceMs: 0 };
const points = [pointConfig({ id: 'v', address: 0, report: always })];

describe('Reporter', () => {
  it('writes nothing to the outbox for a device without a cloud identity, but keeps its values', () => {
    const outbox = new RecordingOutbox();
    const reporter = new Reporter([deviceConfig({ name: 'local', points })], outbox, silentLogger(), () => 5);
    reporter.onDeviceState('local', 'online', 'ok');
    reporter.onSample({ device: 'local', ts: 100, values: { v: 7 }, errors: [] });
    reporter.onConfirmedValues('local', { v: 8 });
    expect(outbox.appended).toEqual([]);
    expect(reporter.latest('local')).toEqual({ v: 8 });
    expect(reporter.isOnline('local')).toBe(true);
    expect(reporter.lastSampleAt('local')).toBe(100);
  });

  it('keeps the poll time with each report and adds it as an attribute when configured', () => {
    const outbox = new RecordingOutbox();
    const devices = [
      deviceConfig({ name: 'plain', points, cloud: { accessToken: 't', allowCreate: false } }),
      deviceConfig({ name: 'stamped', points, cloud: { accessToken: 't', allowCreate: false, timestampAttribute: 'ts' } }),
    ];
    const reporter = new Reporter(devices, outbox, silentLogger(), () => 999);
    reporter.onSample({ device: 'plain', ts: 100, values: { v: 1 }, errors: [] });
    reporter.onSample({ device: 'stamped', ts: 200, values: { v: 2 }, errors: [] });
    reporter.onDeviceState('stamped', 'offline', 'timeout');
    expect(outbox.appended).toEqual([
      { device: 'plain', body: { v: 1 }, ts: 100 },
      { device: 'stamped', body: { v: 2, ts: 200 }, ts: 200 },
      { device: 'stamped', body: { online: false, ts: 999 }, ts: 999 },
    ]);
  });
});
