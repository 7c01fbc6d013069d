// Values the cloud holds for one device's writable points, applied to the device: a push or a
// sync is written, read back and reported as confirmed; values the cloud stored but the device
// never took are corrected from the device.
import type { CommandService } from './commands.js';
import { firstNames } from '../core/device-write-types.js';
import type { Logger } from '../core/logger.js';
import type { Reporter } from './reporter.js';

export class CloudValues {
  private retired = false;
  /** Applies between their first write and the report of what the device confirmed. */
  private confirming = 0;

  constructor(
    readonly device: string,
    private readonly commands: Pick<CommandService, 'applyAttributes' | 'readBack' | 'knows' | 'stampWrite' | 'writesNotSynced'>,
    private readonly reporter: Pick<Reporter, 'onConfirmedValues' | 'latest'>,
    private readonly log: Logger,
  ) {}

  /**
   * The device was replaced by a reload: nothing read through the old point map is reported any
   * more (work still running on it is run again by the replacement, or synced again).
   */
  retire(): void {
    this.retired = true;
  }

  /** A stamp for values decided now (write-sequencer.ts): a write stamped later wins over them. */
  stamp(): number {
    return this.commands.stampWrite();
  }

  /**
   * Writes the values (checked against the point map) and reports what the device confirmed.
   * `stamp`: when they were decided (a push received, a sync's read sent); now when not given.
   * `synced`: the cloud's stored values (they give way to writes of their points under way).
   */
  async apply(values: Record<string, unknown>, source: string, stamp?: number, synced = false): Promise<void> {
    if (this.retired) return;
    this.confirming += 1;
    try {
      const result = await this.commands.applyAttributes(values, source, stamp, synced);
      if (this.retired) return;
      // Corrected values bypass the change filter: the cloud holds the pushed value, not the old one.
      const confirmed = { ...result.applied, ...result.corrected };
      if (Object.keys(confirmed).length > 0) this.reporter.onConfirmedValues(this.device, confirmed);
    } finally {
      this.confirming -= 1;
    }
  }

  /** Writes of the device that were not a sync's, since start. */
  get writesNotSynced(): number {
    return this.commands.writesNotSynced();
  }

  /** Whether a write is under way whose confirmed values are not reported yet. */
  get unconfirmed(): boolean {
    return this.confirming > 0;
  }

  /**
   * The cloud stored the values of a push the device never took: report the device's real values
   * of those points (past the change filter), with one log line saying why.
   */
  async correct(ids: readonly string[], reason: string): Promise<void> {
    if (this.retired) return;
    const read = await this.commands.readBack(ids);
    if (this.retired) return;
    const points = Object.keys(read.values);
    if (points.length > 0) this.reporter.onConfirmedValues(this.device, read.values);
    const unread = [...Object.keys(read.failed), ...Object.keys(read.absent)];
    this.log.warn({ reason, corrected: points.length, points: firstNames(points), ...(unread.length > 0 ? { unread: firstNames(unread) } : {}) }, 'cloud values corrected from device');
  }

  /** A point of the device's map (only those are worth correcting). */
  knows(id: string): boolean {
    return this.commands.knows(id);
  }

  /** The values the device was last seen holding. */
  held(): Readonly<Record<string, unknown>> {
    return this.reporter.latest(this.device);
  }
}
