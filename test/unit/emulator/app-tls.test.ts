// The self-signed app-side pair is served only from a directory this user alone could have
// written: a planted key (another user's directory, one writable by others, a symbolic link)
// is refused with the reason, never served.
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureSelfSigned } from '../../../packages/emulator/src/appside/tls.js';
import { skipUnless } from '../../helpers/skips.js';

describe('app-side TLS directory', () => {
  let base: string;
  beforeEach(() => { base = mkdtempSync(join(tmpdir(), 'app-tls-')); });
  afterEach(() => { rmSync(base, { recursive: true, force: true }); });

  it('makes a pair once in a private directory and reuses it', () => {
    const dir = join(base, 'tls');
    const first = ensureSelfSigned(dir, '127.0.0.1');
    expect(statSync(dir).mode & 0o077).toBe(0);
    expect(statSync(join(dir, 'server.key')).mode & 0o777).toBe(0o600);
    const again = ensureSelfSigned(dir, '127.0.0.1');
    expect(again.cert.equals(first.cert)).toBe(true);
    expect(again.caFile).toBe(join(dir, 'ca.crt'));
  }, 30_000);

  it.each([
    ['writable by others', (dir: string) => { mkdirSync(dir); chmodSync(dir, 0o777); }, /is writable by others \(mode 777\)/],
    ['a symbolic link', (dir: string) => { const real = join(base, 'real'); mkdirSync(real, { mode: 0o700 }); symlinkSync(real, dir); }, /is not a directory/],
    ['a file', (dir: string) => { writeFileSync(dir, 'x'); }, /is not a directory/],
  ])('refuses a directory that is %s', (_name, make, reason) => {
    const dir = join(base, 'tls');
    make(dir);
    expect(() => ensureSelfSigned(dir, '127.0.0.1')).toThrow(reason);
  });

  it('refuses a directory of another user', skipUnless(process.getuid?.() === 0, 'needs root to give a directory to another user'), () => {
    const dir = join(base, 'tls');
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, 65534, 65534);
    expect(() => ensureSelfSigned(dir, '127.0.0.1')).toThrow(/belongs to uid 65534, not to this user \(0\)/);
  });
});
