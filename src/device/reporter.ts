// Poll samples -> change filter -> one outbox record per device per cycle. Also the device's own
// `online` attribute, and values confirmed by cloud writes. Never re-sends a stale value as fresh:
// an offline device reports only `online: false`, and its filter forgets the old values.
// Devices without a `cloud` block keep their latest values here and write nothing to the outbox.
import type { ReportOutbox } from '../core/outbox-types.js';
import { attributesReport, type ReportValue } from '../cloud/mqtt/topics.js';
import type { DeviceConfig } from '../core/config/site-types.js';
import type { Logger } from '../core/logger.js';
import { ChangeFilter } from '../core/points/change-filter.js';
import type { PointValue } from '../core/points/types.js';
import type { DeviceState, Sample, SampleSink } from './poller.js';
import { systemTime, type Clock, type EpochMs, type MonoMs, type WallClock } from '../core/time.js';

/** The attribute carrying the field device's own reachability. */
export const ONLINE_ATTRIBUTE = 'online';

interface DeviceReportState {
  filter: ChangeFilter;
  online: boolean | undefined;
  /** Monotonic: for the age of the latest sample. */
  lastSampleAt: MonoMs | undefined;
  /** Poll time of the latest sample or state change: a snapshot's `online` report carries it. */
  lastTs: EpochMs | undefined;
  /** Latest value per point id, in the order a Record would keep them (a Map: ~half the memory of a 50-key object). */
  latest: Map<string, PointValue>;
  /** Only devices with a cloud identity have reports to send. */
  toCloud: boolean;
  /** Attribute carrying the poll time (Unix ms), if configured. */
  timestampAttribute: string | undefined;
}

export class Reporter implements SampleSink {
  private readonly devices = new Map<string, DeviceReportState>();
  private readonly onlineListeners = new Set<(device: string, online: boolean) => void>();
  /** Scratch list of the point ids that passed the filter in the current sample (one for every device: onSample runs to its end). */
  private readonly kept: string[] = [];

  constructor(
    devices: readonly DeviceConfig[],
    private readonly outbox: ReportOutbox,
    private readonly logger: Logger,
    /** Monotonic for the change filter's silences, wall for the reports' `ts`. */
    private readonly clock: Clock & WallClock = systemTime,
  ) {
    for (const d of devices) this.addDevice(d);
  }

  /** A device to report for (start, or added or replaced by a reload): a fresh filter, so its first sample goes out whole. */
  addDevice(d: DeviceConfig): void {
    this.devices.set(d.name, {
      filter: new ChangeFilter(d.points), online: undefined, lastSampleAt: undefined, lastTs: undefined, latest: new Map(),
      toCloud: d.cloud !== undefined, timestampAttribute: d.cloud?.timestampAttribute,
    });
  }

  /** A device removed by a reload: later samples of it are ignored; its queued reports stay in the outbox. */
  removeDevice(name: string): void {
    this.devices.delete(name);
  }

  onSample(sample: Sample): void {
    const state = this.devices.get(sample.device);
    if (!state) return;
    state.lastSampleAt = sample.at;
    state.lastTs = sample.ts;
    const values = sample.values;
    const kept = this.kept;
    kept.length = 0;
    let count = 0;
    for (const id in values) {
      const value = values[id];
      state.latest.set(id, value);
      count += 1;
      if (state.filter.offer(id, value, sample.at)) kept.push(id);
    }
    // Every value passed (the usual case for busy points): report the sample as it is.
    if (kept.length === count) {
      this.append(sample.device, values, sample.ts);
      return;
    }
    const report: Record<string, ReportValue> = {};
    for (const id of kept) report[id] = values[id];
    this.append(sample.device, report, sample.ts);
  }

  onDeviceState(device: string, deviceState: DeviceState, _reason: string, ts: EpochMs): void {
    const state = this.devices.get(device);
    if (!state) return;
    const online = deviceState === 'online';
    if (state.online === online) return;
    state.online = online;
    state.lastTs = ts;
    if (!online) {
      state.filter.forgetAll();
      state.latest.clear();
    }
    // The poller logs the transition itself; here it only becomes an `online` report.
    // The poller's time for it: back online, the start of the cycle whose sample comes next (a later
    // time here would put the first two reports out of order).
    this.append(device, { [ONLINE_ATTRIBUTE]: online }, ts);
    for (const listener of this.onlineListeners) listener(device, online);
  }

  /** Called on each online/offline transition of a device (gateway mode announces it). */
  onOnlineChange(listener: (device: string, online: boolean) => void): () => void {
    this.onlineListeners.add(listener);
    return () => this.onlineListeners.delete(listener);
  }

  /** Values read back after a cloud write: what the device really holds now. */
  onConfirmedValues(device: string, values: Record<string, PointValue>): void {
    const state = this.devices.get(device);
    if (!state) return;
    const ts = this.clock.wallNow();
    const at = this.clock.now();
    for (const [id, value] of Object.entries(values)) {
      state.latest.set(id, value);
      state.filter.offer(id, value, at);
    }
    this.append(device, values, ts);
  }

  /** After a link reconnect: the next poll of every point is sent, plus the online state. */
  snapshotNext(device: string): void {
    const state = this.devices.get(device);
    if (!state) return;
    state.filter.forceSnapshot();
    // The state as of the latest poll: a cycle under way started after it, so its values, which
    // come next, are not older than this report (now would be, by up to a cycle).
    if (state.online !== undefined) this.append(device, { [ONLINE_ATTRIBUTE]: state.online }, state.lastTs ?? this.clock.wallNow());
  }

  lastSampleAt(device: string): MonoMs | undefined {
    return this.devices.get(device)?.lastSampleAt;
  }

  isOnline(device: string): boolean {
    return this.devices.get(device)?.online === true;
  }

  latest(device: string): Readonly<Record<string, PointValue>> {
    const latest = this.devices.get(device)?.latest;
    return latest ? Object.fromEntries(latest) : {};
  }

  private append(device: string, values: Readonly<Record<string, ReportValue>>, ts: EpochMs): void {
    const state = this.devices.get(device);
    if (!state?.toCloud || isEmpty(values)) return;
    const report = state.timestampAttribute === undefined ? values : { ...values, [state.timestampAttribute]: ts };
    try {
      this.outbox.append(device, attributesReport(report), ts);
    } catch (err) {
      this.logger.error({ device, err }, 'outbox append failed');
    }
  }
}

function isEmpty(values: Readonly<Record<string, unknown>>): boolean {
  for (const _ in values) return false;
  return true;
}
