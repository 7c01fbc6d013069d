// The page's HTTP(S) server with its bounds on connections: what a half-open or flooding client
// can hold (the handler answers requests; this decides who gets to send one).
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { WebSettings } from '../../core/config/web-settings.js';
import { ConnectionGuard, connectionsPerAddress } from './connection-guard.js';

export function createGuardedServer(settings: WebSettings, listener: RequestListener): Server {
  // Half-open connections: headers must arrive within 10 s (checked every 5 s, where Node checks every
  // 30 s), a TLS handshake too, and the guard bounds them per address and evicts idle ones first.
  const options = { connectionsCheckingInterval: 5_000, headersTimeout: 10_000, requestTimeout: 30_000 };
  const tls = settings.cert !== undefined && settings.key !== undefined;
  const server: Server = tls
    ? createHttpsServer({ ...options, handshakeTimeout: 10_000, cert: readFileSync(settings.cert ?? ''), key: readFileSync(settings.key ?? '') }, listener)
    : createHttpServer(options, listener);
  const guard = new ConnectionGuard(settings.maxConnections, connectionsPerAddress(settings.maxConnections, settings.maxEventClients));
  guard.attach(server, tls ? 'secureConnection' : 'connection');
  // Node's own bound only as a backstop (raw sockets still in their TLS handshake, a flood faster than closes).
  server.maxConnections = settings.maxConnections * 2;
  return server;
}
