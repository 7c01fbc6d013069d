// When the demo's terminal has hung up (its window closed), Node's exit still restores that
// terminal's settings and, in the versions without nodejs/node#58200 (20.x among them), aborts
// on the dead terminal: SIGABRT and a core dump instead of a clean exit. Stdio pointed at
// /dev/null is left alone by that restore.
import { closeSync, fstatSync, openSync } from 'node:fs';
import { isatty } from 'node:tty';

/** A character device that no longer answers as a terminal: a terminal that hung up. */
function hungUp(fd: number): boolean {
  try {
    return fstatSync(fd).isCharacterDevice() && !isatty(fd);
  } catch {
    return false;
  }
}

export function releaseHungUpTerminal(): void {
  for (const fd of [0, 1, 2]) {
    if (!hungUp(fd)) continue;
    closeSync(fd);
    // The lowest free descriptor is the one just closed: stdio stays valid, writes go nowhere.
    const reopened = openSync('/dev/null', fd === 0 ? 'r' : 'w');
    if (reopened !== fd) closeSync(reopened);
  }
}
