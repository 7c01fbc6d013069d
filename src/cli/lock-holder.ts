// Which process holds a state directory's lock (ops/state-lock.ts: an flock on
// <stateDir>/fieldgate.lock, taken by `fieldgate run` only and released by the kernel when it dies).
// `fieldgate reload` signals that process and no other: a PID written in a file can be stale or
// forged by whoever can write the state directory; the kernel's lock table cannot.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LOCK_FILE } from '../ops/state-lock.js';

export type LockHolder = { pid: number; path: string } | { none: string; path: string } | { problem: string; path: string };

/** glibc's major/minor of a dev_t, as /proc/locks prints them (hex). */
function deviceText(dev: bigint): string {
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  return `${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}`;
}

/** The holder of the FLOCK on `<stateDir>/fieldgate.lock` in /proc/locks (pure once both are read). */
export function findFlockHolder(locksText: string, device: string, inode: bigint): number | undefined {
  for (const line of locksText.split('\n')) {
    // "1: FLOCK  ADVISORY  WRITE 1234 fe:00:2148871 0 EOF"; waiters are marked "->".
    const m = /^\d+:\s+FLOCK\s+\S+\s+WRITE\s+(\d+)\s+([0-9a-f]+:[0-9a-f]+):(\d+)\s/.exec(line);
    if (m && m[2] === device && BigInt(m[3]) === inode) return Number(m[1]);
  }
  return undefined;
}

export function stateLockHolder(stateDir: string, locksFile = '/proc/locks'): LockHolder {
  const path = join(stateDir, LOCK_FILE);
  let device: string;
  let inode: bigint;
  try {
    const s = statSync(path, { bigint: true });
    device = deviceText(s.dev);
    inode = s.ino;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { none: `${path} does not exist`, path };
    return { problem: `cannot read ${path} (${code ?? String(err)}): run as root or the daemon's user`, path };
  }
  let locks: string;
  try {
    locks = readFileSync(locksFile, 'utf8');
  } catch (err) {
    return { problem: `cannot tell which process holds ${path} (${locksFile}: ${(err as NodeJS.ErrnoException).code ?? String(err)}); give --pid`, path };
  }
  const pid = findFlockHolder(locks, device, inode);
  return pid === undefined ? { none: `nothing holds ${path}`, path } : { pid, path };
}
