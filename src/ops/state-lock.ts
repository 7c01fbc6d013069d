// One daemon per state directory, by exclusive flock(2)s held on open descriptors for the life of
// the process (the kernel releases them when it dies, even by kill -9: no stale lock survives):
// - on the state directory itself: the lock that decides. Deleting or replacing a file in the
//   directory cannot lift it, and it needs no write, so a read-only or full filesystem takes it.
// - on `<stateDir>/fieldgate.lock` (the lock versions before the directory lock took), which also
//   holds the holder's PID for a second daemon's message; the PID alone proves nothing. Best
//   effort: on a read-only or full filesystem it is opened read-only, or not at all, and the PID
//   is written when it can be.
// check(), run every storageRetryMs, takes the lock once a directory that could not be created at
// start exists, re-takes it on a directory replaced while running, and writes a deleted lock file
// again. Each degraded state is logged once, and its end once. flock goes through libc.ts (Node
// has no flock), loaded only by `run`.
import { closeSync, fstatSync, ftruncateSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../core/logger.js';
import { errnoError, libc } from '../os/libc.js';

/** `fieldgate run` on a state directory another daemon holds (sysexits EX_CANTCREAT); systemd must not restart on it. */
export const EXIT_STATE_LOCKED = 73;

export const LOCK_FILE = 'fieldgate.lock';

const LOCK_EX = 2;
const LOCK_NB = 4;

export type LockState =
  | { state: 'held' }
  /** The directory does not exist and cannot be created yet (read-only or full parent): retried by check(). */
  | { state: 'pending'; cause: string }
  | { state: 'refused'; holderPid: number | undefined };

interface Held {
  fd: number;
  /** dev:ino of what the descriptor has open. */
  id: string;
}

/** The lock of one state directory for one process; see the file comment. */
export class StateDirLock {
  readonly lockFile: string;
  private dir: Held | undefined;
  private file: (Held & { writable: boolean }) | undefined;
  private pidWritten = false;
  /** The degraded states currently logged, by name, so each is logged once per episode. */
  private readonly degraded = new Map<string, string>();

  constructor(readonly stateDir: string, private readonly log: Logger, private readonly pid = process.pid) {
    this.lockFile = join(stateDir, LOCK_FILE);
  }

  /** Takes (or keeps) the lock; `refused` when another process holds it. Throws only when flock(2) itself fails. */
  check(): LockState {
    if (this.dir && idOfPath(this.stateDir) !== this.dir.id) {
      this.log.warn({ stateDir: this.stateDir }, 'state directory deleted or replaced while running: locking the new one');
      this.release();
    }
    if (!this.dir) {
      const taken = this.lockDirectory();
      if (taken.state !== 'held') return taken;
    }
    return this.keepLockFile();
  }

  release(): void {
    for (const held of [this.file, this.dir]) if (held) closeQuietly(held.fd);
    this.file = undefined;
    this.dir = undefined;
    this.pidWritten = false;
  }

  private lockDirectory(): LockState {
    let fd: number;
    try {
      mkdirSync(this.stateDir, { recursive: true, mode: 0o700 });
      fd = openSync(this.stateDir, 'r');
    } catch (err) {
      const cause = causeOf(err);
      this.enter('directory', cause, () => this.log.error({ stateDir: this.stateDir, cause, effect: 'polling and reporting from memory; the lock is taken when the directory can be made' }, 'state directory cannot be created: lock pending'));
      return { state: 'pending', cause };
    }
    if (!tryFlock(fd, this.stateDir)) {
      closeQuietly(fd);
      return { state: 'refused', holderPid: holderPidOf(this.lockFile) };
    }
    this.dir = { fd, id: idOfFd(fd) };
    this.leave('directory', () => this.log.info({ stateDir: this.stateDir }, 'state directory lock taken'));
    return { state: 'held' };
  }

  /** The lock file locked and holding our PID, as far as the filesystem lets it. */
  private keepLockFile(): LockState {
    if (this.file && idOfPath(this.lockFile) !== this.file.id) {
      // Deleted or replaced: the directory lock still holds; the file is made again for the PID.
      closeQuietly(this.file.fd);
      this.file = undefined;
      this.pidWritten = false;
    }
    if (!this.file) {
      const opened = openLockFile(this.lockFile);
      if ('cause' in opened) {
        this.enter('file', opened.cause, () => this.log.warn({ lockFile: this.lockFile, cause: opened.cause, effect: 'the lock on the state directory holds; a second daemon is refused without the PID' }, 'state lock file cannot be written'));
        return { state: 'held' };
      }
      if (!tryFlock(opened.fd, this.lockFile)) {
        // An older fieldgate (file lock only) runs on this directory.
        closeQuietly(opened.fd);
        const holderPid = holderPidOf(this.lockFile);
        this.release();
        return { state: 'refused', holderPid };
      }
      this.file = { fd: opened.fd, id: idOfFd(opened.fd), writable: opened.writable };
    }
    if (!this.pidWritten) this.writePid();
    return { state: 'held' };
  }

  private writePid(): void {
    const file = this.file;
    if (!file) return;
    try {
      if (!file.writable) throw Object.assign(new Error('opened read-only'), { code: 'EROFS' });
      ftruncateSync(file.fd, 0);
      writeSync(file.fd, `${this.pid}\n`, 0);
      this.pidWritten = true;
      this.leave('file', () => this.log.info({ lockFile: this.lockFile }, 'state lock file written'));
    } catch (err) {
      const cause = causeOf(err);
      // Reopened at the next check: a descriptor opened read-only stays read-only after a remount.
      if (!file.writable) {
        closeQuietly(file.fd);
        this.file = undefined;
      }
      this.enter('file', cause, () => this.log.warn({ lockFile: this.lockFile, cause, effect: 'the lock on the state directory holds; a second daemon is refused without the PID' }, 'state lock file cannot be written'));
    }
  }

  private enter(name: string, cause: string, log: () => void): void {
    if (this.degraded.has(name)) return;
    this.degraded.set(name, cause);
    log();
  }

  private leave(name: string, log: () => void): void {
    if (!this.degraded.delete(name)) return;
    log();
  }
}

/** Opened for writing when it can be, else read-only (flock needs no write access). */
function openLockFile(path: string): { fd: number; writable: boolean } | { cause: string } {
  try {
    // Not truncated on open: the holder's PID must stay readable to a second daemon.
    return { fd: openSync(path, 'a+', 0o600), writable: true };
  } catch (err) {
    try {
      return { fd: openSync(path, 'r'), writable: false };
    } catch {
      return { cause: causeOf(err) };
    }
  }
}

/** True when taken; false when another open file description holds it. */
function tryFlock(fd: number, path: string): boolean {
  const { flock, errno } = libc();
  if (flock(fd, LOCK_EX | LOCK_NB) === 0) return true;
  const code = errno();
  if (code === osConstants.errno.EWOULDBLOCK || code === osConstants.errno.EAGAIN) return false;
  closeQuietly(fd);
  throw errnoError(`flock ${path}`, code);
}

function idOfFd(fd: number): string {
  const stat = fstatSync(fd);
  return `${stat.dev}:${stat.ino}`;
}

function idOfPath(path: string): string | undefined {
  try {
    const stat = statSync(path);
    return `${stat.dev}:${stat.ino}`;
  } catch {
    return undefined;
  }
}

function causeOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as NodeJS.ErrnoException).code;
  return code && !err.message.startsWith(code) ? `${code}: ${err.message}` : err.message;
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already closed.
  }
}

function holderPidOf(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
