// The page off loopback as on a plant LAN: HTTPS with a certificate, a password, logins limited.
// The daemon with the simulator and the emulator; the client trusts only the test CA.
import { readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import { silentLogger } from '../../src/ops/log.js';
import { hashPassword } from '../../src/ops/web/password.js';
import { makeTestCertificates, type TestCertificates } from '../helpers/tls-certs.js';
import { meterDevice, startSite, type Site } from './harness.js';
import { answerOf, withWeb, type Answer } from './web-rig.js';

const PASSWORD = 'lan-password-42';

describe('commissioning page over HTTPS with a password', () => {
  let site: Site;
  let gateway: GatewayHandle;
  let certs: TestCertificates;
  let ca: Buffer;

  function call(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
    return answerOf((onAnswer) => request({ host: '127.0.0.1', port: gateway.webPort, method, path, headers, ca }, onAnswer), body);
  }

  beforeAll(async () => {
    certs = makeTestCertificates();
    ca = readFileSync(certs.caFile);
    site = await startSite();
    // 0.0.0.0 would reach the LAN; the test binds 127.0.0.1 but with a password and a certificate as on site.
    gateway = await startGateway(withWeb(site.config([meterDevice('meter-1', 1, 'demo-meter-1-token')]), {
      passwordHash: await hashPassword(PASSWORD), cert: certs.certFile, key: certs.keyFile, loginFailuresPerMinute: 3,
    }), { logger: silentLogger(), env: {} });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await site?.close();
    rmSync(certs.dir, { recursive: true, force: true });
  });

  it('serves HTTPS with HSTS and a Secure session cookie; limits failed logins per address, then lets the right one in after', async () => {
    const page = await call('GET', '/');
    expect(page.status).toBe(200);
    expect(page.headers['strict-transport-security']).toMatch(/max-age=/);
    const session = await call('GET', '/api/session');
    const cookie = String(session.headers['set-cookie']);
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/HttpOnly/);
    const { csrf } = JSON.parse(session.body) as { csrf: string };
    const headers = { Cookie: cookie.split(';')[0], 'X-CSRF-Token': csrf, 'Content-Type': 'application/json', Origin: `https://127.0.0.1:${gateway.webPort}` };
    const tries: number[] = [];
    for (let i = 0; i < 5; i++) tries.push((await call('POST', '/api/login', headers, JSON.stringify({ password: `wrong-${i}` }))).status);
    expect(tries).toEqual([401, 401, 401, 429, 429]);
    // Refused unchecked while limited, even with the right password.
    const limited = await call('POST', '/api/login', headers, JSON.stringify({ password: PASSWORD }));
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await call('GET', '/api/status', { Cookie: headers.Cookie })).status).toBe(401);
  });

  it('refuses plain HTTP on the HTTPS port', async () => {
    const plain = await fetch(`http://127.0.0.1:${gateway.webPort}/api/status`).then((r) => r.status, (err: Error) => err.name);
    expect(plain).not.toBe(200);
  });
});
