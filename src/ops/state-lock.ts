// One daemon per state directory: an exclusive flock(2) on `<stateDir>/fieldgate.lock`, held on an
// open descriptor for the life of the process (the kernel releases it when the process dies, even
// by kill -9, so no stale lock survives). The holder's PID is written into the file for the
// message a second daemon gives; the PID alone proves nothing, the lock does. flock goes through
// libc.ts (Node has no flock), loaded only by `run`.
import { closeSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { errnoError, libc } from '../os/libc.js';

/** `fieldgate run` on a state directory another daemon holds (sysexits EX_CANTCREAT); systemd must not restart on it. */
export const EXIT_STATE_LOCKED = 73;

export const LOCK_FILE = 'fieldgate.lock';

const LOCK_EX = 2;
const LOCK_NB = 4;

export type LockResult =
  | { held: true; path: string; release(): void }
  | { held: false; path: string; holderPid: number | undefined };

/** Takes the state directory's lock without waiting; when another process holds it, says which. */
export function lockStateDir(stateDir: string, pid = process.pid): LockResult {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const path = join(stateDir, LOCK_FILE);
  // Not truncated on open: the holder's PID must stay readable to a second daemon.
  const fd = openSync(path, 'a+', 0o600);
  const { flock, errno } = libc();
  if (flock(fd, LOCK_EX | LOCK_NB) !== 0) {
    const code = errno();
    closeSync(fd);
    if (code !== osConstants.errno.EWOULDBLOCK && code !== osConstants.errno.EAGAIN) throw errnoError(`flock ${path}`, code);
    return { held: false, path, holderPid: holderPidOf(path) };
  }
  ftruncateSync(fd, 0);
  writeSync(fd, `${pid}\n`, 0);
  return {
    held: true,
    path,
    // Closing the descriptor releases the lock; the file stays (deleting it would race a newcomer).
    release: () => closeSync(fd),
  };
}

function holderPidOf(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
