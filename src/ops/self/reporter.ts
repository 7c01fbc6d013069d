// Reports fieldgate's own attributes: every `reportIntervalMs`, at once when the discrete ones
// change (devices online, a bus up or down) and after each reconnect, never two reports closer
// than `minReportGapMs` (changes in between are coalesced into the next). Current values only:
// a report the link could not take is not kept, the next one supersedes it.
import type { SelfIdentitySettings } from '../../core/config/self-identity.js';
import type { SelfChannel } from '../../core/self-channel.js';
import { repeatEvery, type Time } from '../../core/time.js';
import { TransitionLog } from '../../core/transitions.js';
import type { Logger } from '../../core/logger.js';
import { discreteState, selfAttributes, type SelfSample } from './attributes.js';

export interface SelfReporterOptions {
  channel: SelfChannel;
  sample(): SelfSample;
  settings: Pick<SelfIdentitySettings, 'reportIntervalMs' | 'minReportGapMs'>;
  time: Time;
  log: Logger;
}

/** How often the discrete attributes are looked at (at most the report gap). */
const CHECK_EVERY_MS = 1000;

export class SelfReporter {
  /** The last sample the cloud acknowledged: the baseline of the next report's rates. */
  private reported: SelfSample | undefined;
  private reportedState: string | undefined;
  private lastAttemptAt: number | undefined;
  private inFlight = false;
  private reconnected = false;
  private cancelTimer: (() => void) | undefined;
  private readonly transitions: TransitionLog;
  readonly counters = { reports: 0, failures: 0 };

  constructor(private readonly options: SelfReporterOptions) {
    this.transitions = new TransitionLog(options.log);
    options.channel.onUp(() => {
      this.reconnected = true;
      this.check();
    });
  }

  start(): void {
    if (this.cancelTimer) return;
    const every = Math.min(CHECK_EVERY_MS, this.options.settings.minReportGapMs);
    this.cancelTimer = repeatEvery(this.options.time, every, () => this.check(), { unref: true });
  }

  stop(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
  }

  /** Reports now if a report is due and the gap since the last attempt allows it. */
  check(): void {
    if (this.inFlight) return;
    const now = this.options.time.now();
    const { reportIntervalMs, minReportGapMs } = this.options.settings;
    if (this.lastAttemptAt !== undefined && now - this.lastAttemptAt < minReportGapMs) return;
    let sample: SelfSample;
    try {
      sample = this.options.sample();
    } catch (err) {
      this.options.log.error({ err }, 'own status unavailable');
      return;
    }
    const state = discreteState(sample.status);
    const periodic = this.reported === undefined || now - this.reported.at >= reportIntervalMs;
    if (!periodic && !this.reconnected && state === this.reportedState) return;
    void this.report(sample, state, now);
  }

  private async report(sample: SelfSample, state: string, now: number): Promise<void> {
    this.inFlight = true;
    this.lastAttemptAt = now;
    try {
      await this.options.channel.reportAttributes(selfAttributes(sample, this.reported));
      this.reported = sample;
      this.reportedState = state;
      this.reconnected = false;
      this.counters.reports += 1;
      this.transitions.update('report', false, 'own attributes not reported', 'own attributes reported again');
    } catch (err) {
      this.counters.failures += 1;
      this.transitions.update('report', true, 'own attributes not reported', 'own attributes reported again', { err });
    } finally {
      this.inFlight = false;
    }
  }
}
