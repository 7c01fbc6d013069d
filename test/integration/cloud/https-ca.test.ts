// Interface B over HTTPS with a private CA (gateway.cloud.caFile), against a local HTTPS server.
import { readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceApiClient } from '../../../src/cloud/http/device-api.js';
import { CloudHttpError, NetworkError } from '../../../src/cloud/http/errors.js';
import { HttpClient } from '../../../src/cloud/http/http-client.js';
import { RateQueue } from '../../../src/cloud/http/rate-queue.js';
import { SecretValues } from '../../../src/core/redact.js';
import { makeTestCertificates, type TestCertificates } from '../../helpers/tls-certs.js';

const TOKEN = 'device-token-7f3a9c';
const PROJECT_KEY = 'project-key-51be02';

let certs: TestCertificates;
let server: Server;
let baseUrl: string;
const seen: { path: string; projectKey: string | undefined }[] = [];

function queue(): RateQueue {
  return new RateQueue({
    concurrency: 2, intervalCap: 100, intervalMs: 1000, maxPending: 10, attempts: 1,
    backoff: { initialMs: 10, maxMs: 50, jitter: 0 }, max429Retries: 0, lowRemaining: 0,
  });
}

beforeAll(async () => {
  certs = makeTestCertificates();
  server = createServer({ cert: readFileSync(certs.certFile), key: readFileSync(certs.keyFile) }, (req, res) => {
    const projectKey = req.headers['project-key'];
    seen.push({ path: req.url ?? '', projectKey: typeof projectKey === 'string' ? projectKey : undefined });
    res.setHeader('content-type', 'application/json');
    if (projectKey !== PROJECT_KEY) {
      // A server that echoes what it was sent: the key must not reach an error message.
      res.statusCode = 401;
      res.end(JSON.stringify({ message: `project key ${String(projectKey)} is not valid for ${req.url}` }));
      return;
    }
    res.end(JSON.stringify({ result: 1, attributes: { setpoint: 21.5 } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(certs.dir, { recursive: true, force: true });
});

describe('interface B over HTTPS with a private CA', () => {
  it('reads attributes when the CA file is given', async () => {
    const http = new HttpClient({ timeoutMs: 5000, ca: readFileSync(certs.caFile) });
    const api = new DeviceApiClient({ baseUrl, http, queue: queue() });
    expect(await api.readAttributes({ accessToken: TOKEN, projectKey: PROJECT_KEY }, ['setpoint'])).toEqual({ setpoint: 21.5 });
    expect(seen.at(-1)).toEqual({ path: `/app/device/v1/${TOKEN}/attributes?keys=setpoint`, projectKey: PROJECT_KEY });
  });

  it('refuses the server without the CA file (the certificate is not trusted)', async () => {
    const before = seen.length;
    const http = new HttpClient({ timeoutMs: 5000 });
    const api = new DeviceApiClient({ baseUrl, http, queue: queue() });
    const failure = await api.readAttributes({ accessToken: TOKEN, projectKey: PROJECT_KEY }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(NetworkError);
    expect(String(failure)).toMatch(/CERT|SIGNATURE|ISSUER/);
    expect(seen.length).toBe(before);
  });

  it('keeps the secrets it sent out of the error a server echoes them in', async () => {
    const secrets = new SecretValues();
    const http = new HttpClient({ timeoutMs: 5000, ca: readFileSync(certs.caFile), secrets });
    const api = new DeviceApiClient({ baseUrl, http, queue: queue() });
    const wrongKey = 'wrong-project-key-93d1';
    const failure = await api.readAttributes({ accessToken: TOKEN, projectKey: wrongKey }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(CloudHttpError);
    const message = (failure as Error).message;
    expect(message).toContain('HTTP 401');
    expect(message).toContain('project key [redacted] is not valid');
    expect(message).not.toContain(wrongKey);
  });
});
