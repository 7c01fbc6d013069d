// The commissioning page under hostile HTTP, against the daemon with the simulator and emulator:
// CSRF, cross-origin POSTs, path traversal, a 10 MB body, event streams beyond the bound.
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import { silentLogger } from '../../src/ops/log.js';
import { hashPassword } from '../../src/ops/web/password.js';
import { meterDevice, startSite, waitFor, type Site } from './harness.js';
import { PageClient, withWeb } from './web-rig.js';

const PASSWORD = 'plant-floor-password';
const MAX_STREAMS = 5;
/** Smaller than the defaults: the site file's bounds are the ones the page keeps. */
const SCAN_UNITS = 4;
const FRAMES_KEPT = 10;

/** A raw request: the path goes out exactly as written (fetch would normalise "/../"). */
function raw(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: Buffer): Promise<{ status: number; text: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', (err) => resolve({ error: err.message }));
    });
    req.on('error', (err) => resolve({ error: err.message }));
    req.end(body);
  });
}

describe('commissioning page: hostile HTTP', () => {
  let site: Site;
  let gateway: GatewayHandle;
  let base: string;
  let port: number;
  let client: PageClient;

  beforeAll(async () => {
    site = await startSite();
    const config = withWeb(site.config([meterDevice('meter-1', 1, 'demo-meter-1-token'), meterDevice('meter-2', 2, 'demo-meter-2-token')]), {
      passwordHash: await hashPassword(PASSWORD), maxEventClients: MAX_STREAMS, maxBodyBytes: 65_536, maxScanUnits: SCAN_UNITS, lineFramesKept: FRAMES_KEPT,
    });
    gateway = await startGateway(config, { logger: silentLogger(), env: {} });
    port = gateway.webPort!;
    base = `http://127.0.0.1:${port}`;
    client = new PageClient(base);
    await client.session();
    expect((await client.login(PASSWORD)).status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await site?.close();
  });

  it('serves the page with security headers, a CSP without inline scripts and no inline script', async () => {
    const res = await fetch(`${base}/`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    // The page's two scripts, both files of its own: no inline script.
    expect(html.match(/<script[^>]*>/g)).toEqual(['<script src="/assets/add.js" defer>', '<script src="/assets/app.js" defer>']);
  });

  it('answers no data without a login, and the cookie is HttpOnly and SameSite=Strict', async () => {
    expect((await fetch(`${base}/api/status`)).status).toBe(401);
    expect((await fetch(`${base}/api/device/meter-1`)).status).toBe(401);
    expect((await fetch(`${base}/api/events`)).status).toBe(401);
    expect((await fetch(`${base}/api/line?bus=plant`)).status).toBe(401);
    expect((await fetch(`${base}/api/line?bus=nope`, { headers: client.headers() })).status).toBe(404);
    const res = await fetch(`${base}/api/session`);
    const cookie = res.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(await res.json()).toMatchObject({ authenticated: false, passwordRequired: true });
  });

  it('refuses a POST without or with a wrong CSRF token, and a cross-origin POST with the right one', async () => {
    const noToken = await fetch(`${base}/api/logout`, { method: 'POST', headers: client.headers({ 'Content-Type': 'application/json' }), body: '{}' });
    expect(noToken.status).toBe(403);
    expect((await client.post('/api/logout', {}, { 'X-CSRF-Token': 'forged' })).status).toBe(403);
    expect((await client.post('/api/logout', {}, { Origin: 'http://evil.example' })).status).toBe(403);
    expect((await client.post('/api/logout', {}, { 'Sec-Fetch-Site': 'cross-site' })).status).toBe(403);
    // None of them logged the session out.
    expect((await fetch(`${base}/api/status`, { headers: client.headers() })).status).toBe(200);
  });

  it('reads and scans only for a logged-in session with its CSRF token', async () => {
    const stranger = new PageClient(base);
    await stranger.session();
    expect((await stranger.post('/api/read', { bus: 'plant', unit: 1, address: 0 })).status).toBe(401);
    expect((await stranger.post('/api/scan', { bus: 'plant', from: 1, to: 2 })).status).toBe(401);
    expect((await client.post('/api/read', { bus: 'plant', unit: 1, address: 0 }, { 'X-CSRF-Token': '' })).status).toBe(403);
    const read = await client.post('/api/read', { bus: 'plant', unit: 1, address: 0 });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ raw: [215] });
    expect((await client.post('/api/scan', { bus: 'plant', from: 1, to: 200 })).status).toBe(400);
    const wide = await client.post('/api/scan', { bus: 'plant', from: 1, to: SCAN_UNITS + 1 });
    expect(wide.status).toBe(400);
    expect(await wide.json()).toMatchObject({ error: expect.stringContaining(`at most ${SCAN_UNITS} units`) });
    expect((await client.post('/api/read', ['not', 'an', 'object'])).status).toBe(400);
    // Writes are off unless web.allowWrites: nothing reaches the device.
    expect((await client.post('/api/write', { device: 'meter-1', values: { setpoint: 50 } })).status).toBe(403);
    expect(site.sim.simulator.getRegister(1, 'holding', 0)).not.toBe(500);
  });

  it('no secret reaches the browser: status, device view and cloud view carry no token or key', async () => {
    for (const path of ['/api/status', '/api/device/meter-1', '/api/device/meter-1/cloud', '/api/session']) {
      const res = await fetch(`${base}${path}`, { headers: client.headers() });
      expect(res.status, path).toBe(200);
      const text = await res.text();
      for (const secret of ['demo-meter-1-token', 'demo-meter-2-token', 'demo-project-key', 'scrypt:']) expect(text, path).not.toContain(secret);
    }
  });

  it('never lets a path reach the file system', async () => {
    const paths = [
      '/../../../../etc/passwd', '/assets/../../../../etc/passwd', '/assets/%2e%2e/%2e%2e/%2e%2e/etc/passwd', '/assets/..%2f..%2fpackage.json',
      '/%2e%2e/%2e%2e/etc/passwd', '/assets/app.js/../../package.json', '/assets/%2fetc%2fpasswd', '/device/..%2f..%2fetc%2fpasswd', '/api/device/..%2fmeter-1',
      '/assets/app.js%00.txt', '/assets/', '/assets', '//etc/passwd', '/package.json', '/src/main.ts',
    ];
    for (const path of paths) {
      const res = await raw(port, 'GET', path, client.headers());
      expect('status' in res, path).toBe(true);
      if (!('status' in res)) continue;
      expect(res.text, path).not.toMatch(/root:|"name": "fieldgate"|startGateway/);
      // The page's own shell is fine for /device/<anything>: it holds no data.
      if (!path.startsWith('/device/')) expect([400, 401, 404], path).toContain(res.status);
    }
  });

  it('refuses a 10 MB body at once and keeps serving', async () => {
    const big = Buffer.alloc(10 * 1024 * 1024, 0x61);
    const declared = await raw(port, 'POST', '/api/login', client.headers({ 'Content-Type': 'application/json', 'X-CSRF-Token': client.csrf, 'Content-Length': String(big.length) }), big);
    // The 413 arrives (measured here: every time); a connection cut while the client still writes is tolerated.
    if ('status' in declared) expect(declared.status).toBe(413);
    const chunked = await raw(port, 'POST', '/api/login', client.headers({ 'Content-Type': 'application/json', 'X-CSRF-Token': client.csrf, 'Transfer-Encoding': 'chunked' }), big);
    if ('status' in chunked) expect(chunked.status).toBe(413);
    for (const result of [declared, chunked]) if ('error' in result) expect(result.error).toMatch(/ECONNRESET|EPIPE|socket hang up/);
    expect((await fetch(`${base}/api/status`, { headers: client.headers() })).status).toBe(200);
  });

  it('refuses 1,000 event streams beyond the bound; polls go on; the streams end with their clients', async () => {
    const controllers: AbortController[] = [];
    const open = async () => {
      const controller = new AbortController();
      controllers.push(controller);
      const res = await fetch(`${base}/api/events?device=meter-1`, { headers: client.headers(), signal: controller.signal });
      if (res.status !== 200) await res.body?.cancel();
      return res.status;
    };
    const accepted = await Promise.all(Array.from({ length: MAX_STREAMS }, open));
    expect(accepted).toEqual(Array(MAX_STREAMS).fill(200));
    const cyclesBefore = gateway.status().devices[0].cyclesWithValues ?? 0;
    // 1,000 more at once: each answered 503, or cut at the connection bound (maxConnections: 4 x maxEventClients + 256 sockets).
    const refused = await Promise.all(Array.from({ length: 1000 }, () => open().catch((err: Error) => err.name)));
    expect(refused.filter((r) => r === 200)).toEqual([]);
    expect(refused.filter((r) => r === 503).length).toBeGreaterThan(0);
    expect(refused.filter((r) => r !== 503 && r !== 'TypeError')).toEqual([]);
    // The daemon keeps polling while hundreds of clients knock.
    await waitFor(() => ((gateway.status().devices[0].cyclesWithValues ?? 0) >= cyclesBefore + 3 ? true : undefined), 20_000);
    for (const c of controllers) c.abort();
    await waitFor(async () => {
      const status = await fetch(`${base}/api/events`, { headers: client.headers() });
      await status.body?.cancel();
      return status.status === 200 ? true : undefined;
    }, 20_000);
  });

  /** An event stream's text, read until `enough` says so, then closed (each event is "event: NAME\ndata: JSON\n\n"). */
  async function streamUntil(path: string, enough: (text: string) => boolean): Promise<string> {
    const controller = new AbortController();
    // A stream the test just closed frees its slot when the daemon sees the close (a 503 until then),
    // and idle keep-alive sockets of earlier tests may still fill the connection limit (a reset).
    const res = await waitFor(async () => {
      const answer = await fetch(`${base}${path}`, { headers: client.headers(), signal: controller.signal }).catch(() => undefined);
      if (answer === undefined) return undefined;
      if (answer.status !== 503) return answer;
      await answer.body?.cancel();
      return undefined;
    }, 20_000);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    await waitFor(async () => {
      const { value } = await reader.read();
      text += new TextDecoder().decode(value);
      return enough(text) ? true : undefined;
    }, 20_000);
    controller.abort();
    return text;
  }

  it('the line page keeps lineFramesKept frames of the bus, no more', async () => {
    const lineUntil = (enough: (text: string) => boolean) => streamUntil('/api/line?bus=plant', enough);
    // Watched long enough for more frames than are kept (two devices polled every 200 ms).
    await lineUntil((text) => text.split('event: frame\n').length > FRAMES_KEPT + 3);
    const again = await lineUntil((text) => /event: frames\ndata: .*\n\n/.test(text));
    const kept = JSON.parse(/event: frames\ndata: (.*)\n\n/.exec(again)![1]) as unknown[];
    expect(kept).toHaveLength(FRAMES_KEPT);
  });

  it('a client that never reads its stream does not hold up the others or the polls', async () => {
    // Its stream must be open (200), not refused for want of a slot or a connection the previous tests just freed.
    const socket = await waitFor(async () => {
      const candidate = connect(port, '127.0.0.1');
      candidate.on('error', () => undefined);
      await new Promise((resolve) => candidate.once('connect', resolve));
      candidate.write(`GET /api/events?device=meter-1 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nCookie: ${client.cookie}\r\n\r\n`);
      // Closed unanswered while the previous tests' idle keep-alive sockets still fill the connection limit.
      const head = await new Promise<string>((resolve) => {
        candidate.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1')));
        candidate.once('close', () => resolve(''));
      });
      if (head.startsWith('HTTP/1.1 200')) return candidate;
      candidate.destroy();
      return undefined;
    }, 20_000);
    socket.pause();
    await streamUntil('/api/events?device=meter-1', (seen) => seen.includes('event: device'));
    socket.destroy();
  });
});
