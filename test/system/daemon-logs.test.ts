// The daemon as a child process: JSON logs on stdout and nothing else on stdout or stderr,
// transitions logged, ordered stop on SIGTERM, and not one secret in a full run's logs at trace
// level; with the commissioning page (HTTPS, a password, logins) and a share of the bus in use.
import { execFile, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/ops/web/password.js';
import { deviceApi, startSite, waitFor, type Site } from './harness.js';
import { TSX_FROM_SOURCE } from '../helpers/child.js';
import { freePort } from '../helpers/mosquitto.js';
import { makeTestCertificates } from '../helpers/tls-certs.js';
import { answerOf } from './web-rig.js';

const SECRETS = ['demo-meter-1-token', 'demo-meter-2-token', 'demo-project-key', 'demo-access-key', 'demo-secret-key'];

describe('fieldgate run (child process)', () => {
  let site: Site | undefined;
  afterEach(async () => site?.close());

  it('logs JSON transitions, stops cleanly on SIGTERM, and never logs a secret', async () => {
    site = await startSite();
    const s = site;
    const file = join(s.stateDir, 'site.yaml');
    const certs = makeTestCertificates();
    const ca = readFileSync(certs.caFile);
    const webPort = await freePort();
    const sharePort = await freePort();
    const password = 'page-password-of-the-log-test';
    const passwordHash = await hashPassword(password);
    writeFileSync(file, `
gateway:
  stateDir: ${join(s.stateDir, 'state')}
  health: { port: 0 }
  web: { port: ${webPort}, cert: ${certs.certFile}, key: ${certs.keyFile} }
  cloud:
    mqttUrl: mqtt://127.0.0.1:${s.emulator.mqttPort}
    apiBaseUrl: http://127.0.0.1:${s.emulator.httpPort}
    appId: demo-app
buses:
  - { name: plant, kind: tcp, host: 127.0.0.1, port: ${s.sim.tcp?.port}, timeoutMs: 500, share: { port: ${sharePort} } }
devices:
  - name: meter-1
    bus: plant
    unitId: 1
    pollIntervalMs: 200ms
    cloud: { accessToken: demo-meter-1-token }
    points:
      - { id: setpoint, table: holding, address: 0, type: int16, scale: 0.1, writable: true, min: 0, max: 100 }
      - { id: voltage, table: input, address: 0, scale: 0.1 }
  - name: meter-2
    bus: plant
    unitId: 2
    pollIntervalMs: 200ms
    cloud: { deviceId: dev-meter-2 }
    points:
      - { id: setpoint, table: holding, address: 0, type: int16, scale: 0.1 }
`.replace('health: { port: 0 }', 'health: { enabled: false }'));
    const child = spawn(process.execPath, [...TSX_FROM_SOURCE, 'test/system/fixtures/cli.ts', 'run', '--config', file], {
      env: {
        PATH: process.env.PATH, LOG_LEVEL: 'trace', FIELDGATE_PROJECT_KEY: 'demo-project-key',
        FIELDGATE_ACCESS_KEY: 'demo-access-key', FIELDGATE_SECRET_KEY: 'demo-secret-key', FIELDGATE_WEB_PASSWORD_HASH: passwordHash,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitFor(async () => {
        const b = await deviceApi(s, 'demo-meter-2-token', 'GET', '/attributes');
        return (b.attributes as Record<string, unknown> | undefined)?.online === true ? true : undefined;
      }, 30_000);
      await deviceApi(s, 'demo-meter-1-token', 'POST', '/attributes', { setpoint: 12.5, nope: 1 });
      await waitFor(() => (s.sim.simulator.getRegister(1, 'holding', 0) === 125 ? true : undefined));
      // The page: a wrong password, the right one, the status behind it; a read through the share.
      const call = (method: string, path: string, headers: Record<string, string>, body?: string) =>
        answerOf((onAnswer) => request({ host: '127.0.0.1', port: webPort, method, path, headers, ca }, onAnswer), body);
      const session = await call('GET', '/api/session', {});
      const cookie = String(session.headers['set-cookie']).split(';')[0];
      const headers = { Cookie: cookie, 'X-CSRF-Token': (JSON.parse(session.body) as { csrf: string }).csrf, 'Content-Type': 'application/json', Origin: `https://127.0.0.1:${webPort}` };
      expect((await call('POST', '/api/login', headers, JSON.stringify({ password: 'not-the-password' }))).status).toBe(401);
      const login = await call('POST', '/api/login', headers, JSON.stringify({ password }));
      expect(login.status).toBe(200);
      expect((await call('GET', '/api/status', { Cookie: String(login.headers['set-cookie']).split(';')[0] })).status).toBe(200);
      // mbpoll: an independent Modbus TCP client.
      const shared = await promisify(execFile)('mbpoll', ['-m', 'tcp', '-p', String(sharePort), '-a', '1', '-t', '4', '-0', '-r', '0', '-c', '1', '-1', '-o', '5', '127.0.0.1']);
      expect(shared.stdout).toMatch(/^\[0\]:\s+125$/m);
      s.sim.simulator.setFault(2, { timeout: true });
      await waitFor(() => (out.includes('"device offline"') ? true : undefined), 30_000);
    } finally {
      child.kill('SIGTERM');
      rmSync(certs.dir, { recursive: true, force: true });
    }
    expect(await exited).toBe(0);
    // Only JSON, on both streams: a runtime warning (DEP0169 from mqtt.js's url.parse) would be a
    // plain line in the journal that `fieldgate logs --level` cannot filter.
    for (const line of `${out}${err}`.split('\n').filter((l) => l !== '')) {
      expect(() => JSON.parse(line) as unknown, `not JSON: ${line.slice(0, 200)}`).not.toThrow();
    }
    const lines = out.trim().split('\n');
    const records = lines.map((l) => JSON.parse(l) as { msg: string; level: number });
    const messages = records.map((r) => r.msg);
    expect(messages).toContain('gateway started');
    expect(messages).toContain('cloud link up');
    expect(messages).toContain('cloud write refused');
    expect(messages).toContain('page login failed');
    expect(messages).toContain('page login');
    expect(messages.filter((m) => m === 'device offline')).toHaveLength(1);
    expect(messages.at(-1)).toBe('gateway stopped');
    // The page's password and its hash (whole, or its salt or digest alone) are secrets too.
    for (const secret of [...SECRETS, password, passwordHash, ...passwordHash.split(':').slice(-2)]) {
      expect(out.includes(secret), `stdout leaks ${secret}`).toBe(false);
      expect(err.includes(secret), `stderr leaks ${secret}`).toBe(false);
    }
    console.log(`daemon run with the page and a share: ${lines.length} log lines checked for ${SECRETS.length + 4} secrets`);
  }, 90_000);
});
