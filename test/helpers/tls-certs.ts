// A throw-away CA and a server certificate for 127.0.0.1 (TLS tests), made with the openssl CLI.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificates {
  dir: string;
  caFile: string;
  certFile: string;
  keyFile: string;
}

export function makeTestCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'tls-'));
  chmodSync(dir, 0o755);
  const file = (name: string) => join(dir, name);
  const run = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=fieldgate test CA',
    '-keyout', file('ca.key'), '-out', file('ca.crt'));
  run('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', file('server.key'), '-out', file('server.csr'));
  writeFileSync(file('ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  run('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.crt'), '-CAkey', file('ca.key'), '-CAcreateserial',
    '-days', '2', '-extfile', file('ext.cnf'), '-out', file('server.crt'));
  for (const name of ['ca.crt', 'server.crt', 'server.key']) chmodSync(file(name), 0o644);
  return { dir, caFile: file('ca.crt'), certFile: file('server.crt'), keyFile: file('server.key') };
}
