// The wss certificate: given on the command line, or a self-signed CA and server pair made once
// with the openssl CLI into a directory and reused (a client trusts the printed CA file).
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, join } from 'node:path';

export interface AppTlsMaterial {
  cert: Buffer;
  key: Buffer;
  /** The CA file a client should trust, when the pair was generated here. */
  caFile: string | undefined;
  certFile: string;
}

export function loadTlsFiles(certFile: string, keyFile: string): AppTlsMaterial {
  return { cert: readFileSync(certFile), key: readFileSync(keyFile), caFile: undefined, certFile };
}

/** Names the server certificate answers for: loopback, localhost, and the listen host. */
function subjectAltNames(host: string): string {
  const names = new Set(['IP:127.0.0.1', 'DNS:localhost']);
  if (isIP(host) !== 0) {
    if (host !== '0.0.0.0' && host !== '::') names.add(`IP:${host}`);
  } else if (host.length > 0) {
    names.add(`DNS:${host}`);
  }
  return [...names].join(',');
}

/**
 * Reuses dir's pair when present; otherwise makes a CA (10 years) and a server pair (825 days) in
 * a fresh sibling directory renamed into place, so two emulators starting at once never read a
 * half-written pair (the one that loses the rename uses the winner's).
 */
export function ensureSelfSigned(dir: string, host: string): AppTlsMaterial {
  const names = { caFile: 'ca.crt', certFile: 'server.crt', keyFile: 'server.key' };
  const complete = (d: string): boolean => Object.values(names).every((n) => existsSync(join(d, n)));
  refuseForeign(dir);
  if (!complete(dir)) {
    mkdirSync(dirname(dir), { recursive: true });
    const work = mkdtempSync(`${dir}.new-`);
    try {
      generatePair(work, host);
      try {
        renameSync(work, dir);
      } catch (err) {
        if (!complete(dir)) throw err;
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  const file = (name: string): string => join(dir, name);
  return { cert: readFileSync(file(names.certFile)), key: readFileSync(file(names.keyFile)), caFile: file(names.caFile), certFile: file(names.certFile) };
}

/**
 * A pair someone else could have written (a directory owned by another user, writable by others,
 * or a symbolic link) is never served: its key may be theirs.
 */
function refuseForeign(dir: string): void {
  let stat;
  try {
    stat = lstatSync(dir);
  } catch {
    return;
  }
  const uid = process.getuid?.();
  const problem = !stat.isDirectory() ? 'is not a directory (a symbolic link or a file)'
    : uid !== undefined && stat.uid !== uid ? `belongs to uid ${stat.uid}, not to this user (${uid})`
      : (stat.mode & 0o022) !== 0 ? `is writable by others (mode ${(stat.mode & 0o777).toString(8)})`
        : undefined;
  if (problem) throw new Error(`app-side TLS directory ${dir} ${problem}: its key may not be ours; remove it or give --app-tls-dir`);
}

function generatePair(dir: string, host: string): void {
  const file = (name: string): string => join(dir, name);
  const run = (...args: string[]): void => {
    try {
      execFileSync('openssl', args, { stdio: 'pipe' });
    } catch (err) {
      const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
      throw new Error(`cannot make the app-side certificate with openssl (${stderr || (err as Error).message}); give --app-tls-cert and --app-tls-key instead`);
    }
  };
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '3650', '-subj', '/CN=fieldgate emulator CA',
    '-keyout', file('ca.key'), '-out', file('ca.crt'));
  run('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=fieldgate emulator', '-keyout', file('server.key'), '-out', file('server.csr'));
  writeFileSync(file('ext.cnf'), `subjectAltName=${subjectAltNames(host)}\n`);
  run('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.crt'), '-CAkey', file('ca.key'), '-CAcreateserial',
    '-days', '825', '-extfile', file('ext.cnf'), '-out', file('server.crt'));
  chmodSync(file('server.key'), 0o600);
  chmodSync(file('ca.key'), 0o600);
}
