// A 429 storm from interface A while several devices are provisioned: after a 429, no request
// reaches the cloud before its Retry-After has passed. A logging proxy sits in front of the emulator.
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import { silentLogger } from '../../src/ops/log.js';
import { meterDevice, startSite, waitFor, type Site } from './harness.js';

interface Seen {
  at: number;
  path: string;
  status: number;
  retryAfterS: number | undefined;
}

async function startProxy(target: number, seen: Seen[]): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const at = Date.now();
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
      const upstream = await fetch(`http://127.0.0.1:${target}${req.url ?? '/'}`, { method: req.method, headers, ...(chunks.length ? { body: Buffer.concat(chunks) } : {}) });
      const retry = upstream.headers.get('retry-after');
      seen.push({ at, path: req.url ?? '', status: upstream.status, retryAfterS: retry === null ? undefined : Number(retry) });
      const out: Record<string, string> = {};
      upstream.headers.forEach((v, k) => { if (k !== 'content-length' && k !== 'content-encoding' && k !== 'transfer-encoding') out[k] = v; });
      res.writeHead(upstream.status, out);
      res.end(Buffer.from(await upstream.arrayBuffer()));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return server;
}

describe('rate limiting', () => {
  let site: Site | undefined;
  let gateway: GatewayHandle | undefined;
  let proxy: Server | undefined;
  afterEach(async () => {
    await gateway?.stop();
    await new Promise<void>((r) => (proxy ? proxy.close(() => r()) : r()));
    await site?.close();
  });

  it('sends no request before Retry-After after a 429', async () => {
    site = await startSite();
    const s = site;
    s.emulator.setRateLimit({ limit: 1, windowS: 2 });
    const seen: Seen[] = [];
    proxy = await startProxy(s.emulator.httpPort, seen);
    const port = (proxy.address() as { port: number }).port;
    // Three seeded devices by id (certificate) and two new ones created by device key (create + certificate).
    const devices = [
      ...['dev-meter-1', 'dev-meter-2', 'dev-meter-3'].map((id, i) => ({ ...meterDevice(`m${i + 1}`, 1, ''), cloud: { deviceId: id, allowCreate: false } })),
      ...['storm-new-1', 'storm-new-2'].map((key) => ({ ...meterDevice(key, 1, ''), cloud: { deviceKey: key, allowCreate: true } })),
    ];
    gateway = await startGateway(s.config(devices, { apiBaseUrl: `http://127.0.0.1:${port}`, appId: 'demo-app', accessKey: 'demo-access-key', secretKey: 'demo-secret-key' }), { logger: silentLogger(), env: {} });
    const g = gateway;
    await waitFor(() => (g.status().links.length === 5 && g.status().links.every((l) => l.state === 'up') ? true : undefined), 120_000);
    const limited = seen.filter((x) => x.status === 429);
    const created = seen.filter((x) => x.path === '/api/v1/device' && x.status === 200).length;
    console.log(`429 storm: ${seen.length} requests (${seen.filter((x) => x.path.startsWith('/api/')).length} to interface A), ${limited.length} answered 429, ${created} devices created`);
    expect(created).toBe(2);
    expect(limited.length).toBeGreaterThan(0);
    for (const hit of limited) {
      const earliest = hit.at + (hit.retryAfterS ?? 0) * 1000;
      // Every A and B call goes through the one queue, so none may jump the pause. 50 ms of slack
      // for the proxy's own timestamps.
      const early = seen.filter((x) => x.at > hit.at && x.at < earliest - 50);
      expect(early, `requests within Retry-After of the 429 at ${hit.at}`).toEqual([]);
    }
    expect(g.status().rateQueue?.rateLimited).toBe(limited.length);
  }, 150_000);
});
