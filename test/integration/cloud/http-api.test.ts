import { createServer } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProjectApiClient, type ProjectApiClientOptions } from '../../../src/cloud/http/project-api.js';
import { DeviceApiClient } from '../../../src/cloud/http/device-api.js';
import { CloudApiError, CloudHttpError, NetworkError } from '../../../src/cloud/http/errors.js';
import { HttpClient, type HttpClientOptions } from '../../../src/cloud/http/http-client.js';
import { RateQueue, type RateInfo } from '../../../src/cloud/http/rate-queue.js';
import { silentLogger } from '../../../src/ops/log.js';
import { asEpoch, asMono } from '../../../src/core/time.js';
import { FakeHttpServer, type SeenRequest } from './fake-http.js';

let server: FakeHttpServer;
let baseUrl: string;
let queue: RateQueue;
const rateInfos: RateInfo[] = [];

function makeQueue(): RateQueue {
  return new RateQueue({
    concurrency: 4, intervalCap: 100, intervalMs: 1000, maxPending: 100, attempts: 2,
    backoff: { initialMs: 10, maxMs: 50, jitter: 0 }, max429Retries: 3, lowRemaining: 0,
  });
}

function makeHttp(options: Partial<HttpClientOptions> = {}): HttpClient {
  return new HttpClient({ timeoutMs: 5000, onRateInfo: (i) => { rateInfos.push(i); queue.observe(i); }, ...options });
}

function makeApi(options: Partial<ProjectApiClientOptions> = {}): ProjectApiClient {
  return new ProjectApiClient({
    baseUrl, appId: 'app', accessKey: 'ak', secretKey: 'sk', http: makeHttp(), queue, log: silentLogger(), ...options,
  });
}

const tokenRequests = () => server.requests.filter((r) => r.path === '/api/v1/access_token');

function projectCloud(options: { refuseFirstCertificate?: boolean; expiresIn?: number } = {}) {
  let issued = 0;
  let refused = false;
  server.handler = (req: SeenRequest) => {
    if (req.method === 'POST' && req.path === '/api/v1/access_token') {
      issued += 1;
      return { body: { result: true, info: { access_token: `api-token-${issued}`, expires_in: options.expiresIn ?? 86400 } } };
    }
    if (req.headers.authorization !== `Bearer api-token-${issued}`) {
      return { body: { result: false, errcode: 401, message: 'invalid token' } };
    }
    if (req.method === 'GET' && req.path === '/api/v1/device/dev%201/certificate') {
      if (options.refuseFirstCertificate && !refused) {
        refused = true;
        return { body: { result: false, errcode: 401, message: 'token expired' } };
      }
      return { body: { result: true, info: { id: 'dev 1', name: 'Pump', access_token: 'dev-secret', project_key: 'pk' } } };
    }
    if (req.method === 'GET' && req.path === '/api/v1/device/missing/certificate') {
      return { body: { result: false, errcode: 404, message: 'device not found' } };
    }
    if (req.method === 'POST' && req.path === '/api/v1/device') {
      return { body: { result: true, info: { id: 'new-id', name: (req.body as { name: string }).name } } };
    }
    return { status: 404, body: { message: 'Request invalid' } };
  };
}

beforeEach(async () => {
  server = new FakeHttpServer();
  baseUrl = await server.start();
  queue = makeQueue();
  rateInfos.length = 0;
});

afterEach(async () => {
  queue.close();
  await server.stop();
});

describe('interface A client', () => {
  it('gets a token once, then uses it as a Bearer token', async () => {
    projectCloud();
    const api = makeApi();
    const certificate = await api.deviceCertificate('dev 1');
    expect(certificate).toEqual({ deviceId: 'dev 1', name: 'Pump', accessToken: 'dev-secret', projectKey: 'pk' });
    await api.deviceCertificate('dev 1');
    expect(tokenRequests()).toHaveLength(1);
    expect(tokenRequests()[0].body).toEqual({ app_id: 'app', access_key: 'ak', secret_key: 'sk' });
    expect(tokenRequests()[0].headers['content-type']).toBe('application/json');
    expect(server.requests[1].headers.authorization).toBe('Bearer api-token-1');
  });

  it('refreshes the token before it expires', async () => {
    projectCloud({ expiresIn: 100 });
    let now = 1_000_000;
    const api = makeApi({ clock: { now: () => asMono(now) }, refreshMarginMs: 10_000 });
    await api.deviceCertificate('dev 1');
    now += 89_000;
    await api.deviceCertificate('dev 1');
    expect(tokenRequests()).toHaveLength(1);
    now += 2_000;
    await api.deviceCertificate('dev 1');
    expect(tokenRequests()).toHaveLength(2);
  });

  it('shares one token request between concurrent callers', async () => {
    projectCloud();
    const api = makeApi();
    await Promise.all([api.deviceCertificate('dev 1'), api.deviceCertificate('dev 1'), api.deviceCertificate('dev 1')]);
    expect(tokenRequests()).toHaveLength(1);
  });

  it('refreshes the token once on a refusal and retries', async () => {
    projectCloud({ refuseFirstCertificate: true });
    const api = makeApi();
    expect((await api.deviceCertificate('dev 1')).accessToken).toBe('dev-secret');
    expect(tokenRequests()).toHaveLength(2);
  });

  it('reports a refusal that survives the refresh as CloudApiError', async () => {
    projectCloud();
    const api = makeApi();
    const err = await api.deviceCertificate('missing').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudApiError);
    expect((err as CloudApiError).errcode).toBe(404);
    expect((err as Error).message).toBe('GET /api/v1/device/<id>/certificate refused by the cloud (errcode 404): device not found');
    expect(tokenRequests()).toHaveLength(2);
  });

  it('does not refresh the token for errcodes not configured as token errors', async () => {
    projectCloud();
    const api = makeApi({ tokenErrorCodes: [401] });
    await expect(api.deviceCertificate('missing')).rejects.toBeInstanceOf(CloudApiError);
    expect(tokenRequests()).toHaveLength(1);
  });

  it('creates a device by device key', async () => {
    projectCloud();
    const api = makeApi();
    expect(await api.createDevice({ name: 'Pump 7', deviceKey: 'KEY7', type: 't1' })).toEqual({ id: 'new-id', name: 'Pump 7' });
    const create = server.requests.find((r) => r.path === '/api/v1/device');
    expect(create?.body).toEqual({ name: 'Pump 7', device_key: 'KEY7', type: 't1' });
  });

  it('reports a failed token exchange without leaking the secret', async () => {
    server.handler = () => ({ body: { result: false, errcode: 403, message: 'bad key' } });
    const err = await makeApi().deviceCertificate('x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudApiError);
    expect(String(err)).not.toContain('sk');
  });
});

describe('interface B client', () => {
  it('reads attributes with the Project-Key header and the credential in the path', async () => {
    server.handler = () => ({ body: { result: 1, attributes: { sp: 21, mode: 'auto' } } });
    const api = new DeviceApiClient({ baseUrl, http: makeHttp(), queue });
    const values = await api.readAttributes({ accessToken: 'tok/1', projectKey: 'pk' }, ['sp', 'mode']);
    expect(values).toEqual({ sp: 21, mode: 'auto' });
    expect(server.requests[0].path).toBe('/app/device/v1/tok%2F1/attributes?keys=mode,sp');
    expect(server.requests[0].headers['project-key']).toBe('pk');
  });

  it('merges identical concurrent reads', async () => {
    let answer: () => void = () => undefined;
    server.handler = () => new Promise((resolve) => { answer = () => resolve({ body: { result: 1, attributes: { a: 1 } } }); });
    const api = new DeviceApiClient({ baseUrl, http: makeHttp(), queue });
    const access = { accessToken: 't', projectKey: 'pk' };
    const reads = [api.readAttributes(access, ['a', 'b']), api.readAttributes(access, ['b', 'a']), api.readAttributes(access, ['b', 'a', 'a'])];
    await expect.poll(() => server.requests.length).toBe(1);
    answer();
    expect(await Promise.all(reads)).toEqual([{ a: 1 }, { a: 1 }, { a: 1 }]);
    expect(server.requests).toHaveLength(1);
    expect(queue.stats().merged).toBe(2);
  });

  it('turns result 0 into CloudApiError', async () => {
    server.handler = () => ({ body: { result: 0, errcode: 403, message: 'wrong project key' } });
    const api = new DeviceApiClient({ baseUrl, http: makeHttp(), queue });
    const err = await api.readAttributes({ accessToken: 'secret-token', projectKey: 'pk' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudApiError);
    expect(String(err)).not.toContain('secret-token');
    expect(server.requests[0].path).toBe('/app/device/v1/secret-token/attributes');
  });

  it('fetches a certificate by device key', async () => {
    server.handler = (req) => req.path === '/device/v1/certificate'
      ? { body: { result: 1, message: 'success', device: { id: 'd9', name: 'Meter', access_token: 'at9', conn_type: '1' } } }
      : { status: 404, body: {} };
    const api = new DeviceApiClient({ baseUrl, http: makeHttp(), queue });
    const certificate = await api.certificateByDeviceKey({ projectKey: 'pk', deviceKey: 'K9', typeKey: 'T' });
    expect(certificate).toEqual({ deviceId: 'd9', name: 'Meter', accessToken: 'at9', connType: '1' });
    expect(server.requests[0].body).toEqual({ device_key: 'K9', type_key: 'T' });
    expect(server.requests[0].headers['project-key']).toBe('pk');
  });

  it('reports an unknown device key as CloudApiError with its errcode', async () => {
    server.handler = () => ({ body: { result: 0, errcode: 404, message: 'unknown device key' } });
    const api = new DeviceApiClient({ baseUrl, http: makeHttp(), queue });
    const err = await api.certificateByDeviceKey({ projectKey: 'pk', deviceKey: 'nope' }).catch((e: unknown) => e);
    expect((err as CloudApiError).errcode).toBe(404);
  });
});

describe('HTTP failures', () => {
  const access = { accessToken: 't', projectKey: 'pk' };

  it.each([
    ['404 path', { status: 404, body: { message: 'Request invalid' } }, 404, /HTTP 404: Request invalid/],
    ['non-JSON body', { status: 200, body: '<html>' }, 200, /not JSON/],
    ['no result field', { status: 200, body: { attributes: {} } }, 200, /no result field/],
    ['attributes not an object', { status: 200, body: { result: 1, attributes: [1] } }, 200, /not an object/],
    ['too large', { status: 200, body: { result: 1, attributes: { big: 'x'.repeat(5000) } } }, 200, /exceeds the 1000 byte limit/],
  ])('%s -> CloudHttpError', async (_name, reply, status, message) => {
    server.handler = () => reply;
    const api = new DeviceApiClient({ baseUrl, http: makeHttp({ maxResponseBytes: 1000 }), queue });
    const err = await api.readAttributes(access).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudHttpError);
    expect((err as CloudHttpError).status).toBe(status);
    expect((err as Error).message).toMatch(message);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a 5xx and then reports it', async () => {
    server.handler = () => ({ status: 503, body: { message: 'busy' } });
    const api = new DeviceApiClient({ baseUrl, http: makeHttp(), queue });
    const err = await api.readAttributes(access).catch((e: unknown) => e);
    expect((err as CloudHttpError).status).toBe(503);
    expect(server.requests).toHaveLength(2);
  });

  it('reports a refused connection as NetworkError', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const api = new DeviceApiClient({ baseUrl: `http://127.0.0.1:${port}`, http: makeHttp(), queue });
    const err = await api.readAttributes(access).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as Error).message).toMatch(/ECONNREFUSED/);
  });

  it('reports a timeout as NetworkError', async () => {
    server.handler = () => ({ hang: true });
    const api = new DeviceApiClient({ baseUrl, http: makeHttp({ timeoutMs: 200 }), queue });
    const err = await api.readAttributes(access).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as Error).message).toMatch(/timed out after 200 ms/);
  });

  it('sends nothing before Retry-After after a 429, then succeeds', async () => {
    let limited = false;
    server.handler = () => {
      if (!limited) {
        limited = true;
        return { status: 429, headers: { 'retry-after': '1' }, body: { message: 'slow down' } };
      }
      return { body: { result: 1, attributes: { a: 1 } } };
    };
    const api = new DeviceApiClient({ baseUrl, http: makeHttp(), queue });
    const first = api.readAttributes(access, ['a']);
    await expect.poll(() => server.requests.length).toBe(1);
    const second = api.readAttributes(access, ['b']);
    expect(await Promise.all([first, second])).toEqual([{ a: 1 }, { a: 1 }]);
    const t429 = server.requests[0].at;
    expect(server.requests).toHaveLength(3);
    for (const later of server.requests.slice(1)) expect(later.at - t429).toBeGreaterThanOrEqual(950);
    expect(queue.stats().rateLimited).toBe(1);
  });

  it('passes X-RateLimit headers to the queue', async () => {
    server.handler = () => ({
      headers: { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '7', 'x-ratelimit-reset': '2000000000' },
      body: { result: 1, attributes: {} },
    });
    // The reset, a time of day, becomes how long the window still runs by the wall clock at the answer.
    const http = makeHttp({ clock: { wallNow: () => asEpoch(1_999_999_990_000) } });
    await new DeviceApiClient({ baseUrl, http, queue }).readAttributes(access);
    expect(rateInfos).toEqual([{ limit: 10, remaining: 7, resetInMs: 10_000 }]);
  });
});
