// Every state file is 0600 and a state directory we create is 0700, whatever the umask of the caller.
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CredentialStore } from '../../../src/cloud/credentials/credential-store.js';
import { Outbox } from '../../../src/cloud/outbox/outbox.js';

const mode = (path: string) => statSync(path).mode & 0o777;

let dir: string;
let umask: number;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fg-state-'));
  umask = process.umask(0o000); // the loosest a user could run us with
});
afterEach(() => {
  process.umask(umask);
  rmSync(dir, { recursive: true, force: true });
});

describe('state file modes', () => {
  it('creates the outbox and its -wal/-shm files 0600', () => {
    const path = join(dir, 'outbox.sqlite');
    const outbox = new Outbox({ path, flushIntervalMs: 10_000, flushRecords: 1000, maxBytesTotal: 1_000_000 });
    try {
      outbox.append('meter', '{"v":1}', 1);
      outbox.flush();
      for (const file of [path, `${path}-wal`, `${path}-shm`]) expect(mode(file), file).toBe(0o600);
    } finally {
      outbox.close();
    }
  });

  it('narrows an outbox file left 0644 by an older version', () => {
    const path = join(dir, 'outbox.sqlite');
    writeFileSync(path, '');
    chmodSync(path, 0o644);
    const outbox = new Outbox({ path, flushIntervalMs: 10_000, flushRecords: 1000, maxBytesTotal: 1_000_000 });
    outbox.close();
    expect(mode(path)).toBe(0o600);
  });

  it('writes the credential store 0600 in a new 0700 directory', async () => {
    const stateDir = join(dir, 'state');
    const store = new CredentialStore(join(stateDir, 'credentials.json'));
    await store.set('meter', { deviceId: 'd1', accessToken: 'tok-1', projectKey: 'pk-1', source: 'api', fetchedAt: 1 });
    expect(mode(stateDir)).toBe(0o700);
    expect(mode(join(stateDir, 'credentials.json'))).toBe(0o600);
  });
});
