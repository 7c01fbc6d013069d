// Steps a child process's wall clock, as NTP does on a Pi without a clock chip, with Debian's
// libfaketime: the offset lives in a file the library reads again each second, and the monotonic
// clock (timers, performance.now) is left alone (FAKETIME_DONT_FAKE_MONOTONIC=1).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LIBFAKETIME_PATHS, MissingPeerError } from './peers.js';

/** Where libfaketime is, or a MissingPeerError naming Debian's package. */
export function requireLibfaketime(): string {
  const found = LIBFAKETIME_PATHS.find((path) => existsSync(path));
  if (found === undefined) throw new MissingPeerError('libfaketime.so.1 not found', 'faketime');
  return found;
}

export class WallClockControl {
  private readonly dir = mkdtempSync(join(tmpdir(), 'fg-faketime-'));
  private readonly file = join(this.dir, 'offset');
  private readonly library = requireLibfaketime();

  constructor() {
    this.step('+0');
  }

  /** The environment that puts a child under this control. */
  env(): Record<string, string> {
    return {
      LD_PRELOAD: this.library, FAKETIME_TIMESTAMP_FILE: this.file, FAKETIME_CACHE_DURATION: '1',
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
    };
  }

  /** The wall clock's offset from the real time from now on (libfaketime's form: '-1h', '+1d', '+10y', '+0'); seen within a second. */
  step(offset: string): void {
    writeFileSync(this.file, `${offset}\n`);
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
