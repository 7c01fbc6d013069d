// Hostile: hundreds of connections that send half their headers and wait (slowloris), from another
// address and from the engineer's own (the tunnel's 127.0.0.1); a normal request after them is
// answered. Real sockets from distinct loopback addresses to the page's server.
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebServer, type WebServer } from '../../src/ops/web/server.js';
import type { GatewayStatus } from '../../src/ops/status.js';
import { captureLogger } from '../helpers/capture-logger.js';
import { answerOf, WEB_DEFAULTS } from './web-rig.js';

const STATUS: GatewayStatus = { version: 't', startedAt: '', uptimeS: 1, buses: [], devices: [], links: [], outbox: null, rateQueue: null };

describe('half-open connections', () => {
  let server: WebServer;
  const held: Socket[] = [];

  /** `count` connections from `from`, each with half its headers sent, once all are connected. */
  async function halfOpen(from: string, count: number): Promise<void> {
    await Promise.all(Array.from({ length: count }, () => new Promise<void>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port: server.port, localAddress: from }, () => {
        socket.write('GET /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
        resolve();
      });
      socket.on('error', () => resolve());
      socket.on('close', () => resolve());
      held.push(socket);
    })));
  }

  function normalRequest(from: string) {
    return answerOf((onAnswer) => request({ host: '127.0.0.1', port: server.port, localAddress: from, path: '/api/session', agent: false }, onAnswer));
  }

  beforeAll(async () => {
    // The default bound: 4 x maxEventClients + 256 = 336 connections.
    server = await startWebServer({ ...WEB_DEFAULTS, port: 0 }, { status: () => STATUS, devices: () => [], latest: () => ({}) }, captureLogger().logger);
  });

  afterAll(async () => {
    for (const socket of held) socket.destroy();
    await server?.close();
  });

  it('answers a normal request after 400 half-sent headers from another address', async () => {
    await halfOpen('127.0.0.2', 400);
    const answer = await normalRequest('127.0.0.1');
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toHaveProperty('csrf');
  }, 60_000);

  it('answers a normal request after 400 half-sent headers from its own address (a local flood through the tunnel address)', async () => {
    await halfOpen('127.0.0.1', 400);
    for (let i = 0; i < 3; i++) expect((await normalRequest('127.0.0.1')).status).toBe(200);
  }, 60_000);
});
