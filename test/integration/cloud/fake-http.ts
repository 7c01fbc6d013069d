// A scriptable local HTTP server for cloud client tests (127.0.0.1, ephemeral port).
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  at: number;
}

export interface FakeReply {
  status?: number;
  headers?: Record<string, string>;
  /** Objects are sent as JSON; strings as they are. */
  body?: unknown;
  /** Never answer (timeout tests). */
  hang?: boolean;
}

export type FakeHandler = (request: SeenRequest) => FakeReply | Promise<FakeReply>;

export class FakeHttpServer {
  readonly requests: SeenRequest[] = [];
  private server: Server | undefined;
  handler: FakeHandler = () => ({ status: 404, body: { message: 'Request invalid' } });

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let body: unknown = text;
        try {
          body = text === '' ? undefined : JSON.parse(text);
        } catch {
          // keep the text
        }
        const seen: SeenRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, at: Date.now() };
        this.requests.push(seen);
        Promise.resolve(this.handler(seen)).then((reply) => {
          if (reply.hang) return;
          const payload = typeof reply.body === 'string' ? reply.body : reply.body === undefined ? '' : JSON.stringify(reply.body);
          res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
          res.end(payload);
        }, () => {
          res.writeHead(500);
          res.end();
        });
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
