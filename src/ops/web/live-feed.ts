// Between the pollers and the reporter: every sample still goes to the reporter first, then into
// the page's history rings and to the page's listeners of that device. Costs one map update per
// sample while the page is enabled and nothing more when no page is open.
import type { DeviceState, SampleSink } from '../../device/poller-types.js';
import type { EpochMs } from '../../core/time.js';
import type { Sample } from '../../device/poll-cycle.js';
import { PointHistory } from './point-history.js';

export interface DeviceEvent {
  device: string;
  ts: number;
  values?: Sample['values'];
  /** Points left without a value this cycle, with why. */
  errors?: Array<{ points: string[]; kind: string; message: string }>;
  state?: DeviceState;
  reason?: string;
}

export class LiveFeed implements SampleSink {
  readonly history: PointHistory;
  private readonly listeners = new Set<(event: DeviceEvent) => void>();
  /** When each point last had a value (epoch ms) and which, for its age on the page and its stale value while the device is down. */
  private readonly lastValueAt = new Map<string, Map<string, number>>();
  private readonly lastValue = new Map<string, Map<string, Sample['values'][string]>>();
  /** Each device's last state change and why (a page opened while a device is down says why). */
  private readonly states = new Map<string, { state: DeviceState; reason: string; at: number }>();

  constructor(private readonly next: SampleSink, historySamples: number) {
    this.history = new PointHistory(historySamples);
  }

  onSample(sample: Sample): void {
    this.next.onSample(sample);
    this.history.record(sample.device, sample.ts, sample.values);
    let times = this.lastValueAt.get(sample.device);
    if (!times) this.lastValueAt.set(sample.device, (times = new Map()));
    let values = this.lastValue.get(sample.device);
    if (!values) this.lastValue.set(sample.device, (values = new Map()));
    for (const [id, value] of Object.entries(sample.values)) {
      times.set(id, sample.ts);
      values.set(id, value);
    }
    if (this.listeners.size === 0) return;
    const errors = sample.errors.map((e) => ({ points: e.points, kind: e.kind, message: e.message }));
    this.emit({ device: sample.device, ts: sample.ts, values: sample.values, errors });
  }

  onDeviceState(device: string, state: DeviceState, reason: string, ts: EpochMs): void {
    this.next.onDeviceState(device, state, reason, ts);
    this.states.set(device, { state, reason, at: Date.now() });
    if (this.listeners.size > 0) this.emit({ device, ts: Date.now(), state, reason });
  }

  /** The device's last state change (epoch ms), if any since start. */
  stateOf(device: string): { state: DeviceState; reason: string; at: number } | undefined {
    return this.states.get(device);
  }

  /** Each point's last value read, kept while the device is offline (the reporter forgets them then). */
  lastValues(device: string): Record<string, Sample['values'][string]> {
    return Object.fromEntries(this.lastValue.get(device) ?? []);
  }

  valueTimes(device: string): Record<string, number> {
    return Object.fromEntries(this.lastValueAt.get(device) ?? []);
  }

  /** After a reload: the rings and times of devices no longer in the site go. */
  retain(devices: ReadonlySet<string>): void {
    for (const device of [...this.states.keys()]) if (!devices.has(device)) this.states.delete(device);
    for (const device of [...this.lastValueAt.keys()]) {
      if (devices.has(device)) continue;
      this.history.forget(device);
      this.lastValueAt.delete(device);
      this.lastValue.delete(device);
    }
  }

  listen(listener: (event: DeviceEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: DeviceEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}
