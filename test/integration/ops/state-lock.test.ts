// The state-directory lock through the real flock(2): flock locks belong to an open file
// description, so a second StateDirLock in this same process contends exactly like a second
// daemon. The lock file deleted, the directory replaced, and (root only, real mounts) a read-only
// or full filesystem and a directory that cannot be created yet.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LOCK_FILE, StateDirLock } from '../../../src/ops/state-lock.js';
import { captureLogger, type CapturedLog } from '../../helpers/capture-logger.js';
import { canMount, fillUp, mountTmpfs, type SmallFs } from '../../system/storage-rig.js';
import { skipUnless } from '../../helpers/skips.js';

let dir: string;
let log: CapturedLog;
const locks: StateDirLock[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fg-lock-'));
  log = captureLogger();
});
afterEach(() => {
  for (const lock of locks.splice(0)) lock.release();
  rmSync(dir, { recursive: true, force: true });
});

function lockOf(stateDir: string, pid: number): StateDirLock {
  const lock = new StateDirLock(stateDir, log.logger, pid);
  locks.push(lock);
  return lock;
}

describe('StateDirLock', () => {
  it('holds the lock, names the holder to a second taker, and frees it on release', () => {
    const stateDir = join(dir, 'state', 'nested');
    const first = lockOf(stateDir, 4242);
    expect(first.check()).toEqual({ state: 'held' });
    expect(readFileSync(join(stateDir, LOCK_FILE), 'utf8')).toBe('4242\n');
    expect(lockOf(stateDir, 5353).check()).toEqual({ state: 'refused', holderPid: 4242 });
    // The refused taker did not overwrite the holder's PID.
    expect(readFileSync(join(stateDir, LOCK_FILE), 'utf8')).toBe('4242\n');
    first.release();
    expect(lockOf(stateDir, 6464).check()).toEqual({ state: 'held' });
    expect(readFileSync(join(stateDir, LOCK_FILE), 'utf8')).toBe('6464\n');
    expect(log.lines()).toEqual([]);
  });

  it.each([
    ['garbage', 'not a pid\n'],
    ['empty', ''],
    ['negative', '-5\n'],
  ])('a lock file with %s content names no PID (the lock, not the file, decides)', (_what, content) => {
    writeFileSync(join(dir, LOCK_FILE), content);
    expect(lockOf(dir, 77).check()).toEqual({ state: 'held' });
    writeFileSync(join(dir, LOCK_FILE), content);
    expect(lockOf(dir, 88).check()).toEqual({ state: 'refused', holderPid: undefined });
  });

  it('a stale PID in the file does not block: a dead holder holds no lock', () => {
    writeFileSync(join(dir, LOCK_FILE), '999999\n');
    expect(lockOf(dir, 12).check()).toEqual({ state: 'held' });
  });

  it('the lock file deleted while held: a second taker is still refused, and the holder writes the file again', () => {
    const first = lockOf(dir, 4242);
    expect(first.check().state).toBe('held');
    unlinkSync(join(dir, LOCK_FILE));
    const second = lockOf(dir, 5353);
    expect(second.check()).toEqual({ state: 'refused', holderPid: undefined });
    // The refused taker leaves nothing behind that a third could mistake for the holder.
    expect(lockOf(dir, 6464).check().state).toBe('refused');
    expect(first.check()).toEqual({ state: 'held' });
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe('4242\n');
    expect(second.check()).toEqual({ state: 'refused', holderPid: 4242 });
  });

  it('the directory replaced while held: the holder locks the new one, or is refused when another took it first', () => {
    const stateDir = join(dir, 'state');
    const first = lockOf(stateDir, 1);
    expect(first.check().state).toBe('held');
    renameSync(stateDir, join(dir, 'old'));
    mkdirSync(stateDir);
    expect(first.check()).toEqual({ state: 'held' });
    expect(log.count('state directory deleted or replaced while running: locking the new one')).toBe(1);
    expect(lockOf(stateDir, 2).check().state).toBe('refused');

    rmSync(stateDir, { recursive: true });
    mkdirSync(stateDir);
    const second = lockOf(stateDir, 3);
    expect(second.check()).toEqual({ state: 'held' });
    expect(first.check()).toEqual({ state: 'refused', holderPid: 3 });
  });
});

const mountable = canMount();

describe('StateDirLock on a failing filesystem (real tmpfs)', skipUnless(mountable, 'mounting a tmpfs needs root (CAP_SYS_ADMIN)'), () => {
  let fs: SmallFs | undefined;
  afterEach(() => {
    fs?.dispose();
    fs = undefined;
  });
  const remount = (mode: 'ro' | 'rw') => execFileSync('mount', ['-o', `remount,${mode}`, fs!.path]);

  it('read-only, no lock file yet: held on the directory, one warning, a second taker refused; the PID written once writable', () => {
    fs = mountTmpfs(256);
    const stateDir = join(fs.path, 'state');
    mkdirSync(stateDir);
    remount('ro');
    const first = lockOf(stateDir, 4242);
    expect(first.check()).toEqual({ state: 'held' });
    expect(first.check()).toEqual({ state: 'held' });
    expect(log.lines().map((l) => [l.msg, String(l.cause)])).toEqual([['state lock file cannot be written', expect.stringMatching(/^EROFS/)]]);
    expect(lockOf(stateDir, 5353).check()).toEqual({ state: 'refused', holderPid: undefined });
    remount('rw');
    expect(first.check()).toEqual({ state: 'held' });
    expect(readFileSync(join(stateDir, LOCK_FILE), 'utf8')).toBe('4242\n');
    expect(log.count('state lock file written')).toBe(1);
    expect(log.count('state lock file cannot be written')).toBe(1);
  });

  it('read-only with the lock file of an earlier run: locked read-only (its stale PID kept), refused to a second taker', () => {
    fs = mountTmpfs(256);
    writeFileSync(join(fs.path, LOCK_FILE), '999999\n');
    remount('ro');
    expect(lockOf(fs.path, 1).check()).toEqual({ state: 'held' });
    expect(lockOf(fs.path, 2).check()).toEqual({ state: 'refused', holderPid: 999999 });
  });

  it('full: the lock is taken, the PID that does not fit is logged once and written when space returns', () => {
    fs = mountTmpfs(256);
    const filler = fillUp(fs.path);
    const first = lockOf(fs.path, 4242);
    expect(first.check()).toEqual({ state: 'held' });
    expect(first.check()).toEqual({ state: 'held' });
    expect(log.lines().map((l) => [l.msg, String(l.cause)])).toEqual([['state lock file cannot be written', expect.stringMatching(/^ENOSPC/)]]);
    expect(lockOf(fs.path, 5353).check().state).toBe('refused');
    rmSync(filler);
    expect(first.check()).toEqual({ state: 'held' });
    expect(readFileSync(join(fs.path, LOCK_FILE), 'utf8')).toBe('4242\n');
  });

  it('a directory that cannot be created (read-only parent): pending, logged once, taken once it can be made', () => {
    fs = mountTmpfs(256);
    remount('ro');
    const stateDir = join(fs.path, 'state');
    const first = lockOf(stateDir, 4242);
    // Node's recursive mkdir reports a read-only parent as ENOENT.
    expect(first.check()).toEqual({ state: 'pending', cause: expect.stringMatching(/^(EROFS|ENOENT)/) });
    expect(first.check().state).toBe('pending');
    expect(log.count('state directory cannot be created: lock pending')).toBe(1);
    remount('rw');
    expect(first.check()).toEqual({ state: 'held' });
    expect(log.count('state directory lock taken')).toBe(1);
    expect(readFileSync(join(stateDir, LOCK_FILE), 'utf8')).toBe('4242\n');
    expect(lockOf(stateDir, 5353).check().state).toBe('refused');
  });
});
