// Whether a serial path is a pseudo-terminal (a socat pair, the simulator's --pty): a pty has no
// line speed, so every baud rate reaches whatever listens on the other end.
import { realpathSync, statSync } from 'node:fs';

/** Linux device majors of Unix98 pty slaves (/dev/pts/N): 136..143. */
const PTY_SLAVE_MAJORS = { first: 136, last: 143 };

/** Linux dev_t -> major number (glibc's encoding: 12 bits at 8..19, more above bit 32). */
function majorOf(rdev: number): number {
  return ((rdev >> 8) & 0xfff) | (Math.floor(rdev / 2 ** 32) & ~0xfff);
}

export function isPseudoTerminal(path: string): boolean {
  try {
    if (realpathSync(path).startsWith('/dev/pts/')) return true;
    const stat = statSync(path);
    const major = majorOf(stat.rdev);
    return stat.isCharacterDevice() && major >= PTY_SLAVE_MAJORS.first && major <= PTY_SLAVE_MAJORS.last;
  } catch {
    // Missing or unreadable: opening it reports the real problem.
    return false;
  }
}
