// The state-directory lock through the real flock(2): flock locks belong to an open file
// description, so a second open in this same process contends exactly like a second daemon.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LOCK_FILE, lockStateDir } from '../../../src/ops/state-lock.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fg-lock-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('lockStateDir', () => {
  it('holds the lock, names the holder to a second taker, and frees it on release', () => {
    const stateDir = join(dir, 'state', 'nested');
    const first = lockStateDir(stateDir, 4242);
    expect(first.held).toBe(true);
    expect(readFileSync(join(stateDir, LOCK_FILE), 'utf8')).toBe('4242\n');
    const second = lockStateDir(stateDir, 5353);
    expect(second).toEqual({ held: false, path: join(stateDir, LOCK_FILE), holderPid: 4242 });
    // The refused taker did not overwrite the holder's PID.
    expect(readFileSync(join(stateDir, LOCK_FILE), 'utf8')).toBe('4242\n');
    if (first.held) first.release();
    const third = lockStateDir(stateDir, 6464);
    expect(third.held).toBe(true);
    expect(readFileSync(join(stateDir, LOCK_FILE), 'utf8')).toBe('6464\n');
    if (third.held) third.release();
  });

  it.each([
    ['garbage', 'not a pid\n'],
    ['empty', ''],
    ['negative', '-5\n'],
  ])('a lock file with %s content names no PID (the lock, not the file, decides)', (_what, content) => {
    writeFileSync(join(dir, LOCK_FILE), content);
    const first = lockStateDir(dir, 77);
    expect(first.held).toBe(true);
    writeFileSync(join(dir, LOCK_FILE), content);
    expect(lockStateDir(dir, 88)).toMatchObject({ held: false, holderPid: undefined });
    if (first.held) first.release();
  });

  it('a stale PID in the file does not block: a dead holder holds no lock', () => {
    writeFileSync(join(dir, LOCK_FILE), '999999\n');
    const taken = lockStateDir(dir, 12);
    expect(taken.held).toBe(true);
    if (taken.held) taken.release();
  });
});
