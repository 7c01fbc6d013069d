// Interface-B sync of one device: reads the cloud's values of its writable points and applies the
// ones the device does not already hold. The credential comes from the credential service, so a
// sync needs no MQTT connection (it can run before the first connect or while the broker is down).
import type { CredentialResolver, DeviceIdentity } from '../cloud/credentials/credentials.js';
import type { DeviceApiClient } from '../cloud/http/device-api.js';
import { repeatEvery, type Timers } from '../core/time.js';
import type { Logger } from '../core/logger.js';
import type { CloudValues } from './cloud-values.js';

export interface CloudValueSyncOptions {
  identity: DeviceIdentity;
  credentials: Pick<CredentialResolver, 'resolve'>;
  deviceApi: Pick<DeviceApiClient, 'readAttributes'>;
  /** Ids of the device's writable points: the only keys asked for and applied. */
  writable: readonly string[];
  values: Pick<CloudValues, 'apply' | 'held'> & Partial<Pick<CloudValues, 'stamp'>>;
  /** Period of the periodic sync; 0 turns it off (syncs still run when asked). */
  periodMs: number;
  /**
   * Whether the cloud has heard what the device holds: no report of it waits for the cloud's
   * acknowledgement and no write is being confirmed. Until then the cloud's stored values may be
   * older than the device's, and the sync waits (tried again every SETTLE_RETRY_MS). Always when absent.
   */
  settled?: () => boolean;
  timers: Timers;
  log: Logger;
}

/** How often a sync waiting for the device's reports to be acknowledged looks again. */
export const SETTLE_RETRY_MS = 250;

export class CloudValueSync {
  readonly counters = { syncs: 0, syncFailures: 0 };
  private cancelPeriodic: (() => void) | undefined;
  private cancelRetry: (() => void) | undefined;
  private stopped = false;

  constructor(private readonly options: CloudValueSyncOptions) {}

  start(): void {
    this.stopped = false;
    const { periodMs, timers } = this.options;
    if (periodMs > 0 && this.options.writable.length > 0) {
      this.cancelPeriodic = repeatEvery(timers, periodMs, () => void this.sync('period'), { unref: true });
    }
  }

  stop(): void {
    this.stopped = true;
    this.cancelPeriodic?.();
    this.cancelPeriodic = undefined;
    this.cancelRetry?.();
    this.cancelRetry = undefined;
  }

  /** One sync; never throws (a failure is counted and logged). */
  async sync(reason: string): Promise<void> {
    const { writable: keys, values: target } = this.options;
    if (keys.length === 0 || this.stopped) return;
    if (this.options.settled && !this.options.settled()) return this.deferred(reason);
    // Stamped before the read: a push that arrives while it is answered is newer than the value
    // read, and wins over it (write-sequencer.ts).
    const stamp = target.stamp?.();
    try {
      const credential = await this.options.credentials.resolve(this.options.identity);
      const access = { accessToken: credential.accessToken, projectKey: credential.projectKey };
      const values = await this.options.deviceApi.readAttributes(access, keys);
      this.counters.syncs += 1;
      // Only values the device does not already hold: a periodic sync must not rewrite registers.
      const held = target.held();
      const changed = Object.fromEntries(Object.entries(values).filter(([k, v]) => keys.includes(k) && held[k] !== v));
      if (Object.keys(changed).length === 0) return;
      await target.apply(changed, `sync:${reason}`, stamp, true);
    } catch (err) {
      this.counters.syncFailures += 1;
      this.options.log.warn({ reason, err }, 'cloud attribute read failed');
    }
  }

  /**
   * The cloud may not have heard the device's latest values yet (a report of a push just written
   * waits for its acknowledgement): what it stored could undo that push. Read once it has.
   */
  private deferred(reason: string): void {
    if (this.cancelRetry) return;
    this.options.log.debug({ reason }, 'cloud attribute read waits for the device reports to be acknowledged');
    this.cancelRetry = this.options.timers.setTimer(() => {
      this.cancelRetry = undefined;
      void this.sync(reason);
    }, SETTLE_RETRY_MS, { unref: true });
  }
}
