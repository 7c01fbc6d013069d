// The HTTP client's own transport (node:http, which replaced global fetch for the private CA)
// against a hostile server on loopback: every bad answer ends in a typed error, bounded in time
// and memory, and nothing is taken as a good answer.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudHttpError, NetworkError } from '../../../src/cloud/http/errors.js';
import { HttpClient } from '../../../src/cloud/http/http-client.js';
import { RedirectRefusedError } from '../../../src/cloud/http/node-fetch.js';

const CAP = 64 * 1024;
const behaviours: Record<string, (res: ServerResponse) => void> = {
  ok: (res) => res.end(JSON.stringify({ result: 1 })),
  huge: (res) => {
    // No content-length: the cap must hold while streaming.
    const chunk = Buffer.alloc(16 * 1024, 0x61);
    let sent = 0;
    const pump = () => {
      while (sent < 4 * 1024 * 1024) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  },
  'huge-declared': (res) => {
    res.setHeader('content-length', String(10 * 1024 * 1024));
    res.write('{');
  },
  stall: (res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.write('{"result":'); },
  'no-headers': () => undefined,
  'cut-mid-body': (res) => { res.writeHead(200); res.write('{"result":1,"attr'); setTimeout(() => res.socket?.destroy(), 20); },
  redirect: (res) => { res.writeHead(302, { location: 'http://127.0.0.1:1/steal' }); res.end(); },
  'not-json': (res) => res.end('<html>gateway timeout</html>'),
  'deep-json': (res) => res.end('['.repeat(100_000) + ']'.repeat(100_000)),
};

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => { const behave = behaviours[(req.url ?? "/").slice(1)]; if (behave) behave(res); else res.end(); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const client = () => new HttpClient({ timeoutMs: 500, maxResponseBytes: CAP });
const get = (mode: string) => client().requestJson({ method: 'GET', url: `${base}/${mode}`, operation: `GET /${mode}` });

describe('HTTP client against a hostile server', () => {
  it('takes a good answer', async () => {
    expect((await get('ok')).body).toEqual({ result: 1 });
  });

  it.each([
    ['huge', CloudHttpError, /exceeds the 65536 byte limit/],
    ['huge-declared', CloudHttpError, /10485760 bytes exceeds the 65536 byte limit/],
    ['stall', NetworkError, /timed out after 500 ms/],
    ['no-headers', NetworkError, /timed out after 500 ms/],
    ['cut-mid-body', NetworkError, /./],
    ['not-json', CloudHttpError, /not JSON/],
  ])('%s: a typed error, never a value', async (mode, type, message) => {
    const err = await get(mode).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(type);
    expect(String((err as Error).message)).toMatch(message);
  });

  it('refuses a redirect instead of following it with the credentials', async () => {
    const err = await get('redirect').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as Error).cause).toBeInstanceOf(RedirectRefusedError);
  });

  it('answers a 100,000-deep JSON body with an error or a value, never a crash', async () => {
    // JSON.parse is iterative in V8: a deep array parses; the caller's shape checks refuse it.
    const outcome = await get('deep-json').then((r) => Array.isArray(r.body), (e: unknown) => e instanceof CloudHttpError);
    expect(outcome).toBe(true);
  });
});
