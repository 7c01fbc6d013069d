// Live pages beyond `maxEventClients`: each refused client gets 503 and its connection closed (a flood
// must not keep sockets against the connection limit), and the bound is logged once each time it is
// reached, not once per refused client. The page's server on a real socket, without a password.
import { Agent, request, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebServer, type WebServer } from '../../src/ops/web/server.js';
import type { GatewayStatus } from '../../src/ops/status.js';
import { captureLogger } from '../helpers/capture-logger.js';
import { answerOf, WEB_DEFAULTS } from './web-rig.js';
import { waitFor } from './harness.js';

const STATUS: GatewayStatus = { version: 't', startedAt: '', uptimeS: 1, buses: [], devices: [], links: [], outbox: null, rateQueue: null };
const REFUSED = 'event-stream client refused: limit reached';

describe('live pages beyond the bound', () => {
  let server: WebServer;
  const log = captureLogger();
  // Keep-alive on, as browsers have it: a refused client's socket would otherwise stay open.
  const agent = new Agent({ keepAlive: true, maxSockets: 100 });
  const open: IncomingMessage[] = [];
  let cookie = '';

  /** A live page that stays open (200), kept in `open`. */
  function openStream(): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: server.port, path: '/api/events', agent: false, headers: { Cookie: cookie } }, (res) => {
        if (res.statusCode === 200) open.push(res);
        else res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
  }

  beforeAll(async () => {
    server = await startWebServer({ ...WEB_DEFAULTS, port: 0, maxEventClients: 2 }, { status: () => STATUS, devices: () => [], latest: () => ({}) }, log.logger);
    // A session first, as the page does: without a password (loopback) it is logged in at once.
    const session = await answerOf((onAnswer) => request({ host: '127.0.0.1', port: server.port, path: '/api/session', agent }, onAnswer));
    expect(session.status).toBe(200);
    cookie = String(session.headers['set-cookie']).split(';')[0];
  });

  afterAll(async () => {
    for (const res of open) res.destroy();
    agent.destroy();
    await server?.close();
  });

  it('answers 503 with Connection: close to every client over the bound, and logs the bound once per time it is reached', async () => {
    expect([await openStream(), await openStream()]).toEqual([200, 200]);
    const refused = await Promise.all(Array.from({ length: 20 }, () =>
      answerOf((onAnswer) => request({ host: '127.0.0.1', port: server.port, path: '/api/events', agent, headers: { Cookie: cookie } }, onAnswer))));
    expect(refused.map((a) => a.status)).toEqual(Array(20).fill(503));
    expect(refused.every((a) => a.headers.connection === 'close')).toBe(true);
    // No refused client's socket is kept for reuse.
    await waitFor(() => (Object.values(agent.freeSockets).flat().length === 0 ? true : undefined), 10_000);
    expect(log.count(REFUSED)).toBe(1);

    // A page closes, another takes its place, and the bound is reached again: a second line.
    open.shift()!.destroy();
    await waitFor(async () => (server.eventClients() < 2 ? true : undefined), 10_000);
    expect(await openStream()).toBe(200);
    expect(await openStream()).toBe(503);
    expect(log.count(REFUSED)).toBe(2);
  });
});
