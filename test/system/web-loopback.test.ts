// The page without a password (loopback only, reached through an ssh tunnel): it trusts loopback,
// so it answers only to loopback names; a web site that points its own name at 127.0.0.1 (DNS
// rebinding) gets 421 and no session, whatever it asks for.
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import { silentLogger } from '../../src/ops/log.js';
import { meterDevice, startSite, type Site } from './harness.js';
import { withWeb } from './web-rig.js';

interface Answer { status: number; text: string; cookie?: string }

function ask(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, setHost: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, cookie: res.headers['set-cookie']?.[0]?.split(';')[0] }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('commissioning page without a password: loopback names only', () => {
  let site: Site;
  let gateway: GatewayHandle;
  let port: number;

  beforeAll(async () => {
    site = await startSite();
    gateway = await startGateway(withWeb(site.config([meterDevice('meter-1', 1, 'demo-meter-1-token')])), { logger: silentLogger(), env: {} });
    port = gateway.webPort!;
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await site?.close();
  });

  it.each(['127.0.0.1', 'localhost', 'LOCALHOST', '[::1]', 'gateway.localhost'])('answers a browser that names the page %s', async (name) => {
    const session = await ask(port, 'GET', '/api/session', { Host: `${name}:${port}` });
    expect(session.status).toBe(200);
    expect(JSON.parse(session.text)).toMatchObject({ authenticated: true, passwordRequired: false });
    expect(session.cookie).toMatch(/^fg_session=/);
    const status = await ask(port, 'GET', '/api/status', { Host: `${name}:${port}`, Cookie: session.cookie! });
    expect(status.status).toBe(200);
    expect(JSON.parse(status.text).devices.map((d: { name: string }) => d.name)).toEqual(['meter-1']);
  });

  it.each([
    ['a rebinding site', 'evil.example'],
    ['a LAN address', '192.168.1.20'],
    ['a name that merely starts like localhost', 'localhost.evil.example'],
    ['an empty Host', ''],
  ])('refuses %s with 421 and no session, on pages, data and POSTs', async (_what, name) => {
    const host = name === '' ? '' : `${name}:${port}`;
    for (const [method, path] of [['GET', '/'], ['GET', '/api/session'], ['GET', '/api/status'], ['GET', '/api/events'], ['POST', '/api/logout']] as const) {
      const answer = await ask(port, method, path, { Host: host, 'Content-Type': 'application/json' }, method === 'POST' ? '{}' : undefined);
      expect(answer.status, `${method} ${path}`).toBe(421);
      expect(answer.cookie).toBeUndefined();
      expect(answer.text).toMatch(/only to localhost or 127\.0\.0\.1/);
    }
  });

  it('refuses an HTTP/1.0 request without a Host header', async () => {
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.end('GET /api/session HTTP/1.0\r\n\r\n'));
      let got = '';
      socket.setEncoding('utf8');
      socket.on('data', (c: string) => (got += c));
      socket.on('end', () => resolve(got));
      socket.on('error', reject);
    });
    expect(text).toMatch(/^HTTP\/1\.[01] 421 /);
    expect(text).not.toMatch(/set-cookie/i);
  });
});
