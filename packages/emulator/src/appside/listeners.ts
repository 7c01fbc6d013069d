// The app side's three doors onto one AppBroker: MQTT over TCP (mosquitto_sub), MQTT over
// WebSocket at /mqtt (ws://), and the same with TLS (wss://, as the cloud serves it).
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import type { Logger } from 'fieldgate/workspace-kit';
import { createWebSocketStream, WebSocketServer } from 'ws';
import type { AppBroker } from './broker.js';
import { listen } from '../listen.js';

export const APP_WS_PATH = '/mqtt';

export interface AppListenOptions {
  host: string;
  /** undefined = that door stays closed; 0 = an ephemeral port. */
  tcpPort: number | undefined;
  wsPort: number | undefined;
  wssPort: number | undefined;
  /** PEM certificate chain and key for wss. */
  tls: { cert: Buffer; key: Buffer } | undefined;
  /** Largest WebSocket message accepted from an app (its SUBSCRIBEs); bigger closes it. */
  maxFrameBytes: number;
}

export interface AppPorts {
  tcp: number | undefined;
  ws: number | undefined;
  wss: number | undefined;
}

type AnyServer = TcpServer | HttpServer;

function attachWebSocket(server: HttpServer, broker: AppBroker, maxFrameBytes: number, log: Logger): WebSocketServer {
  const wss = new WebSocketServer({
    server, path: APP_WS_PATH, maxPayload: maxFrameBytes,
    // MQTT over WebSocket names its subprotocol "mqtt" (3.1.1); older clients "mqttv3.1".
    handleProtocols: (offered) => (offered.has('mqtt') ? 'mqtt' : offered.has('mqttv3.1') ? 'mqttv3.1' : false),
  });
  wss.on('connection', (socket) => {
    const stream = createWebSocketStream(socket);
    stream.on('error', (err) => log.debug({ err: err.message }, 'app websocket error'));
    broker.handle(stream);
  });
  // ws re-emits its server's errors: one from listen() is the caller's to report (once), not this log's.
  wss.on('error', (err) => {
    if (server.listening) log.error({ err }, 'app websocket server error');
  });
  return wss;
}

export class AppListeners {
  private constructor(
    readonly ports: AppPorts,
    private readonly servers: AnyServer[],
    private readonly sockets: WebSocketServer[],
  ) {}

  static async start(options: AppListenOptions, broker: AppBroker, log: Logger): Promise<AppListeners> {
    const servers: AnyServer[] = [];
    const sockets: WebSocketServer[] = [];
    const ports: AppPorts = { tcp: undefined, ws: undefined, wss: undefined };
    const listeners = new AppListeners(ports, servers, sockets);
    try {
      if (options.tcpPort !== undefined) {
        const server = createTcpServer((socket) => broker.handle(socket));
        servers.push(server);
        ports.tcp = await listen(server, options.tcpPort, options.host, 'app-side MQTT');
      }
      if (options.wsPort !== undefined) {
        const server = createHttpServer();
        servers.push(server);
        sockets.push(attachWebSocket(server, broker, options.maxFrameBytes, log));
        ports.ws = await listen(server, options.wsPort, options.host, 'app-side ws');
      }
      if (options.wssPort !== undefined) {
        if (options.tls === undefined) throw new Error('app-side wss needs a certificate and key');
        const server = createHttpsServer({ cert: options.tls.cert, key: options.tls.key });
        servers.push(server);
        sockets.push(attachWebSocket(server, broker, options.maxFrameBytes, log));
        ports.wss = await listen(server, options.wssPort, options.host, 'app-side wss');
      }
    } catch (err) {
      await listeners.close();
      throw err;
    }
    for (const server of servers) server.on('error', (err) => log.error({ err }, 'app-side server error'));
    return listeners;
  }

  async close(): Promise<void> {
    for (const wss of this.sockets) {
      for (const client of wss.clients) client.terminate();
      wss.close();
    }
    await Promise.all(this.servers.filter((s) => s.listening).map((server) => new Promise<void>((resolve) => {
      server.close(() => resolve());
      if ('closeAllConnections' in server) server.closeAllConnections();
    })));
  }
}
