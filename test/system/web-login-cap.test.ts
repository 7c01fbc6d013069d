// Logins guessed from many addresses at once: each address stays under its own limit, the cap over
// all addresses refuses them together (429 with Retry-After, logged once), unchecked, even with the
// right password. Real sockets from distinct loopback addresses (127.0.0.x) to the page's server.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebServer, type WebServer } from '../../src/ops/web/server.js';
import type { GatewayStatus } from '../../src/ops/status.js';
import { hashPassword } from '../../src/ops/web/password.js';
import { captureLogger } from '../helpers/capture-logger.js';
import { asEpoch, asMono } from '../../src/core/time.js';
import { answerOf, WEB_DEFAULTS, type Answer } from './web-rig.js';

const PASSWORD = 'plant-lan-password';
const STATUS: GatewayStatus = { version: 't', startedAt: '', uptimeS: 1, buses: [], devices: [], links: [], outbox: null, rateQueue: null };

describe('failed logins over all addresses', () => {
  let server: WebServer;
  const log = captureLogger();
  /** The page's clock, moved by the test past the minute. */
  let now = 1_700_000_000_000;

  /** One request from `from` (a loopback address of its own), with its cookie and CSRF token if given. */
  function call(from: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
    return answerOf((onAnswer) => request({ host: '127.0.0.1', port: server.port, localAddress: from, method, path, headers }, onAnswer), body);
  }

  async function login(from: string, password: string): Promise<Answer> {
    const session = await call(from, 'GET', '/api/session');
    const cookie = String(session.headers['set-cookie']).split(';')[0];
    const { csrf } = JSON.parse(session.body) as { csrf: string };
    return call(from, 'POST', '/api/login', { Cookie: cookie, 'X-CSRF-Token': csrf, 'Content-Type': 'application/json' }, JSON.stringify({ password }));
  }

  beforeAll(async () => {
    server = await startWebServer({
      ...WEB_DEFAULTS, port: 0, passwordHash: await hashPassword(PASSWORD), loginFailuresPerMinute: 2, loginFailuresPerMinuteTotal: 4,
    }, { status: () => STATUS, devices: () => [], latest: () => ({}) }, log.logger, { now: () => asMono(now), wallNow: () => asEpoch(now) });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('refuses every address once the total is reached, each address under its own limit; the right password waits out the minute', async () => {
    // Four addresses, one wrong guess each: every one is checked (401).
    const guesses: number[] = [];
    for (let i = 2; i <= 5; i++) guesses.push((await login(`127.0.0.${i}`, `wrong-${i}`)).status);
    expect(guesses).toEqual([401, 401, 401, 401]);
    // A fifth address, never seen, and one already seen: refused unchecked.
    for (const from of ['127.0.0.6', '127.0.0.2']) {
      const refused = await login(from, 'wrong-again');
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    }
    const right = await login('127.0.0.7', PASSWORD);
    expect(right.status).toBe(429);
    expect(right.headers['set-cookie']).toBeUndefined();
    expect(log.count('page logins refused: failed logins from all addresses reached the limit')).toBe(1);
    expect(log.count('page login failed')).toBe(4);
    // The engineer's tunnel (127.0.0.1) is not held by the strangers' total.
    const tunnel = await login('127.0.0.1', PASSWORD);
    expect(tunnel.status).toBe(200);
    // A minute after the guesses the right password is let in.
    now += 60_000;
    const later = await login('127.0.0.7', PASSWORD);
    expect(later.status).toBe(200);
    expect(String(later.headers['set-cookie'])).toMatch(/^fg_session=/);
  });
});

describe('logins sent at once from one address', () => {
  let server: WebServer;
  const log = captureLogger();

  function call(from: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
    return answerOf((onAnswer) => request({ host: '127.0.0.1', port: server.port, localAddress: from, method, path, headers, agent: false }, onAnswer), body);
  }

  beforeAll(async () => {
    server = await startWebServer({ ...WEB_DEFAULTS, port: 0, passwordHash: await hashPassword(PASSWORD) }, { status: () => STATUS, devices: () => [], latest: () => ({}) }, log.logger);
  });

  afterAll(async () => {
    await server?.close();
  });

  it('checks at most loginFailuresPerMinute (5) of 40, the rest refused unchecked, the right password among them included', async () => {
    const sessions: Array<{ cookie: string; csrf: string }> = [];
    for (let i = 0; i < 40; i++) {
      const session = await call('127.0.0.9', 'GET', '/api/session');
      sessions.push({ cookie: String(session.headers['set-cookie']).split(';')[0], csrf: (JSON.parse(session.body) as { csrf: string }).csrf });
    }
    const answers = await Promise.all(sessions.map(({ cookie, csrf }, i) => call('127.0.0.9', 'POST', '/api/login',
      { Cookie: cookie, 'X-CSRF-Token': csrf, 'Content-Type': 'application/json' }, JSON.stringify({ password: i === 20 ? PASSWORD : `wrong-${i}` }))));
    const statuses = answers.map((a) => a.status);
    const checked = statuses.filter((s) => s === 401 || s === 200).length;
    expect(checked).toBeLessThanOrEqual(5);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(35);
    expect(log.count('page login failed')).toBeLessThanOrEqual(5);
  }, 60_000);
});
