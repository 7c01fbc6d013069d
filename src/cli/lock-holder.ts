// Which process holds a state directory's lock (ops/state-lock.ts: an flock on the directory
// itself, the one that decides, and one on <stateDir>/fieldgate.lock, the only one of older
// versions; taken by `fieldgate run` only and released by the kernel when it dies). `fieldgate
// reload` signals that process and no other: a PID written in a file can be stale or forged by
// whoever can write the state directory; the kernel's lock table cannot.
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

/** dev and inode of a path, as /proc/locks names them; or why there are none. */
function lockIdOf(path: string): { device: string; inode: bigint } | { code: string } {
  try {
    const s = statSync(path, { bigint: true });
    return { device: deviceText(s.dev), inode: s.ino };
  } catch (err) {
    return { code: (err as NodeJS.ErrnoException).code ?? String(err) };
  }
}

export function stateLockHolder(stateDir: string, locksFile = '/proc/locks'): LockHolder {
  const path = join(stateDir, LOCK_FILE);
  // The directory's lock decides; the file's is the one a daemon of an older version holds.
  const ids = [lockIdOf(stateDir), lockIdOf(path)];
  const denied = ids.find((id) => 'code' in id && id.code !== 'ENOENT');
  if (denied && 'code' in denied) return { problem: `cannot read ${stateDir} (${denied.code}): run as root or the daemon's user`, path };
  let locks: string;
  try {
    locks = readFileSync(locksFile, 'utf8');
  } catch (err) {
    return { problem: `cannot tell which process holds ${stateDir} (${locksFile}: ${(err as NodeJS.ErrnoException).code ?? String(err)}); give --pid`, path };
  }
  for (const id of ids) {
    if ('code' in id) continue;
    const pid = findFlockHolder(locks, id.device, id.inode);
    if (pid !== undefined) return { pid, path };
  }
  return { none: `nothing holds ${stateDir} or ${path}`, path };
}
