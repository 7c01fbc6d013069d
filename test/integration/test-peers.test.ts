// Tests that need a Debian peer fail at once, naming the missing program and its package, instead
// of waiting for it to the test's deadline (mosquitto missing cost 30 s per test before).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPtyPair } from '../../packages/simulator/src/pty-pair.js';
import { MosquittoClients } from './emulator/mosquitto-clients.js';
import { mbpoll } from './simulator/sim-helpers.js';
import { Mosquitto } from '../helpers/mosquitto.js';
import { MissingPeerError, requireProgram, requirePythonModules } from '../helpers/peers.js';
import { startPtyPair } from '../helpers/socat.js';

describe('a missing test peer', () => {
  let emptyPath: string;
  /** A directory with an executable named mosquitto (never run) and no mosquitto_passwd. */
  let onlyBroker: string;
  beforeAll(() => {
    emptyPath = mkdtempSync(join(tmpdir(), 'fieldgate-no-peers-'));
    onlyBroker = mkdtempSync(join(tmpdir(), 'fieldgate-only-broker-'));
    writeFileSync(join(onlyBroker, 'mosquitto'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
  });
  afterAll(() => {
    for (const dir of [emptyPath, onlyBroker]) rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => vi.unstubAllEnvs());

  const install = (pkg: string) => `install the Debian package ${pkg} (sudo apt-get install ${pkg}; \`npm test\` as root installs every test peer)`;

  it.each<[string, () => Promise<unknown>, string]>([
    ['the mosquitto broker', async () => Mosquitto.start(), `mosquitto not found on PATH: this test needs it as an independent peer; ${install('mosquitto')}`],
    ['mosquitto_passwd for a broker with users', async () => { vi.stubEnv('PATH', onlyBroker); return Mosquitto.start({ users: { a: 'b' } }); }, `mosquitto_passwd not found on PATH: this test needs it as an independent peer; ${install('mosquitto')}`],
    ['socat for a pty pair', async () => startPtyPair(), `socat not found on PATH: this test needs it as an independent peer; ${install('socat')}`],
    ['mbpoll', async () => mbpoll(['-m', 'tcp', '127.0.0.1']), `mbpoll not found on PATH: this test needs it as an independent peer; ${install('mbpoll')}`],
    ['stdbuf for the mosquitto clients', async () => new MosquittoClients(() => 1, 'k').run('stdbuf', ['-oL', 'mosquitto_sub']), `stdbuf not found on PATH: this test needs it as an independent peer; ${install('coreutils')}`],
  ])('%s: fails at once, naming the program and the package', async (_name, start, message) => {
    vi.stubEnv('PATH', emptyPath);
    await expect(start()).rejects.toThrow(message);
  });

  it('names the client behind stdbuf when stdbuf is there', () => {
    const stdbuf = requireProgram('stdbuf');
    vi.stubEnv('PATH', emptyPath);
    expect(() => new MosquittoClients(() => 1, 'k').run(stdbuf, ['-oL', 'mosquitto_sub'])).toThrow(`mosquitto_sub not found on PATH: this test needs it as an independent peer; ${install('mosquitto-clients')}`);
  });

  it('names the Debian package of a missing python module', () => {
    expect(() => requirePythonModules('/usr/bin/python3', ['fieldgate_no_such_module'])).toThrow(MissingPeerError);
    expect(() => requirePythonModules('/usr/bin/python3', ['fieldgate_no_such_module'])).toThrow(`python module fieldgate_no_such_module not found for /usr/bin/python3: this test needs it as an independent peer; ${install('python3-fieldgate-no-such-module')}`);
    expect(() => requirePythonModules('/nonexistent/python3', ['pymodbus'])).toThrow(`/nonexistent/python3 not found: this test needs it as an independent peer; ${install('python3')}`);
  });

  it('finds the peers this machine has', () => {
    expect(requireProgram('socat')).toMatch(/\/socat$/);
    expect(() => requirePythonModules('/usr/bin/python3', ['pymodbus'])).not.toThrow();
  });

  it('makes the simulator\'s own pty pair say which package is missing', async () => {
    vi.stubEnv('PATH', emptyPath);
    await expect(createPtyPair()).rejects.toThrow('socat is not installed (it makes the pty pair): install the Debian package socat (sudo apt-get install socat)');
  });
});
