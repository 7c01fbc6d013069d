// A log level set from the cloud for a while: it reverts by itself, and both changes are logged.
// A second change while one is active replaces it; the level to revert to stays the original one.
import type { Logger } from '../../core/logger.js';
import { asEpoch, type EpochMs, type TimeWithWall } from '../../core/time.js';

/** The process's log level (the root logger's; children without their own level follow it). */
export interface LevelControl {
  get(): string;
  set(level: string): void;
}

export function rootLevelControl(root: Logger): LevelControl {
  return { get: () => root.level, set: (level) => { root.level = level; } };
}

export interface TemporaryLevel {
  level: string;
  previous: string;
  /** Wall clock (shown). */
  revertsAt: EpochMs;
}

export class TemporaryLogLevel {
  private original: string | undefined;
  private cancel: (() => void) | undefined;

  constructor(private readonly control: LevelControl, private readonly time: TimeWithWall, private readonly log: Logger) {}

  /** Sets `level` for `durationMs`, then the level from before the first temporary change. */
  set(level: string, durationMs: number): TemporaryLevel {
    const previous = this.control.get();
    this.original ??= previous;
    this.cancel?.();
    // A time shown to a person: the wall clock; the revert itself waits on a (monotonic) timer.
    const revertsAt = asEpoch(this.time.wallNow() + durationMs);
    // Logged at warn before the change and after the revert, so both lines pass either level.
    // Field names other than `level`, which is pino's own.
    this.log.warn({ logLevel: level, previousLevel: previous, originalLevel: this.original, durationMs }, 'log level changed temporarily');
    this.control.set(level);
    this.cancel = this.time.setTimer(() => this.revert('expired'), durationMs, { unref: true });
    return { level, previous, revertsAt };
  }

  /** Back to the original level now (on stop); a no-op when none is active. */
  revert(reason = 'stopping'): void {
    const original = this.original;
    if (original === undefined) return;
    this.cancel?.();
    this.cancel = undefined;
    this.original = undefined;
    const temporary = this.control.get();
    this.control.set(original);
    this.log.warn({ logLevel: original, temporaryLevel: temporary, reason }, 'log level restored');
  }
}
