import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CreateDeviceInput, DeviceCertificate } from '../../../src/cloud/http/project-api.js';
import {
  CredentialFileError, CredentialResolver, CredentialStore, CredentialUnavailableError,
  type CertificateProvider, type DeviceKeyProvider, type DeviceIdentity,
} from '../../../src/cloud/credentials/credentials.js';
import type { CertificateByKeyInput, DeviceKeyCertificate } from '../../../src/cloud/http/device-api.js';
import { CloudApiError } from '../../../src/cloud/http/errors.js';
import { createLogger, silentLogger } from '../../../src/ops/log.js';
import { SecretValues } from '../../../src/core/redact.js';
import { asEpoch } from '../../../src/core/time.js';

let dir: string;
let path: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'creds-'));
  path = join(dir, 'state', 'credentials.json');
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

class FakeProjectApi implements CertificateProvider {
  calls: string[] = [];
  known = new Map<string, DeviceCertificate>([['d1', { deviceId: 'd1', name: 'n', accessToken: 'at-d1', projectKey: 'pk' }]]);
  async deviceCertificate(deviceId: string): Promise<DeviceCertificate> {
    this.calls.push(`cert:${deviceId}`);
    const cert = this.known.get(deviceId);
    if (!cert) throw new CloudApiError(404, 'device not found', 'GET /api/v1/device/<id>/certificate');
    return cert;
  }
  async createDevice(input: CreateDeviceInput): Promise<{ id: string; name: string }> {
    this.calls.push(`create:${input.deviceKey}`);
    const id = `id-${input.deviceKey}`;
    this.known.set(id, { deviceId: id, name: input.name, accessToken: `at-${id}`, projectKey: 'pk' });
    return { id, name: input.name };
  }
}

class FakeKeyApi implements DeviceKeyProvider {
  calls: CertificateByKeyInput[] = [];
  async certificateByDeviceKey(input: CertificateByKeyInput): Promise<DeviceKeyCertificate> {
    this.calls.push(input);
    if (input.deviceKey === 'unknown') throw new CloudApiError(404, 'unknown device key', 'POST /device/v1/certificate');
    return { deviceId: `dk-${input.deviceKey}`, name: '', accessToken: `at-dk-${input.deviceKey}` };
  }
}

describe('CredentialStore', () => {
  it('writes a 0600 file atomically and reads it back', async () => {
    const store = new CredentialStore(path);
    await store.set('pump', { deviceId: 'd1', accessToken: 'secret', projectKey: 'pk', source: 'api', fetchedAt: 5 });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(dir, 'state'))).toEqual(['credentials.json']);
    const again = new CredentialStore(path);
    expect(await again.load()).toEqual({ skipped: [] });
    expect(again.get('pump')).toEqual({ deviceId: 'd1', accessToken: 'secret', projectKey: 'pk', source: 'api', fetchedAt: 5 });
    await again.delete('pump');
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ version: 1, devices: {} });
  });

  it('treats a missing file as empty and names unusable entries', async () => {
    const store = new CredentialStore(path);
    expect(await store.load()).toEqual({ skipped: [] });
    await store.set('ok', { deviceId: 'd', accessToken: 'a', projectKey: 'p', source: 'device-key', fetchedAt: 1 });
    const file = JSON.parse(readFileSync(path, 'utf8')) as { devices: Record<string, unknown> };
    file.devices.bad = { deviceId: 3 };
    writeFileSync(path, JSON.stringify(file));
    const again = new CredentialStore(path);
    expect(await again.load()).toEqual({ skipped: ['bad'] });
    expect(again.names()).toEqual(['ok']);
  });

  it.each([['not json', /not valid JSON/], ['{"x":1}', /no "devices" object/], ['null', /no "devices" object/]])(
    'reports a broken file %j clearly', async (content, message) => {
      const store = new CredentialStore(join(dir, 'c.json'));
      writeFileSync(join(dir, 'c.json'), content);
      const err = await store.load().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CredentialFileError);
      expect((err as Error).message).toMatch(message);
    });

  it('serialises concurrent writes and keeps all of them', async () => {
    const store = new CredentialStore(path);
    await Promise.all(Array.from({ length: 10 }, (_, i) =>
      store.set(`d${i}`, { deviceId: `d${i}`, accessToken: 'a', projectKey: 'p', source: 'api', fetchedAt: i })));
    const again = new CredentialStore(path);
    await again.load();
    expect(again.names()).toHaveLength(10);
  });
});

describe('CredentialResolver', () => {
  function setup(options: { projectApi?: boolean; keyApi?: boolean; projectKey?: string } = {}) {
    const store = new CredentialStore(path);
    const projectApi = new FakeProjectApi();
    const keyApi = new FakeKeyApi();
    let now = 1000;
    const resolver = new CredentialResolver({
      store, log: silentLogger(), clock: { wallNow: () => asEpoch(now++) },
      projectApi: options.projectApi === false ? undefined : projectApi,
      deviceKeyApi: options.keyApi === false ? undefined : keyApi,
      projectKey: options.projectKey,
    });
    return { store, projectApi, keyApi, resolver };
  }

  it('uses site file credentials first, without any API call', async () => {
    const { resolver, projectApi } = setup();
    const identity: DeviceIdentity = { name: 'pump', deviceId: 'd1', accessToken: 'site-at', projectKey: 'site-pk' };
    expect(await resolver.resolve(identity)).toEqual({ deviceId: 'd1', accessToken: 'site-at', projectKey: 'site-pk', source: 'site' });
    expect(projectApi.calls).toEqual([]);
  });

  it('fetches by device id through interface A, stores it, and uses the store next time', async () => {
    const { resolver, projectApi, store } = setup();
    const identity: DeviceIdentity = { name: 'pump', deviceId: 'd1' };
    expect(await resolver.resolve(identity)).toEqual({ deviceId: 'd1', accessToken: 'at-d1', projectKey: 'pk', source: 'api' });
    const restarted = new CredentialStore(path);
    await restarted.load();
    expect(restarted.get('pump')).toMatchObject({ deviceId: 'd1', accessToken: 'at-d1', source: 'api' });
    const second = new CredentialResolver({ store: restarted, log: silentLogger() });
    expect(await second.resolve(identity)).toMatchObject({ accessToken: 'at-d1', source: 'stored' });
    expect(projectApi.calls).toEqual(['cert:d1']);
    expect(store.get('pump')?.fetchedAt).toBe(1000);
  });

  it('creates the device by device key when allowed', async () => {
    const { resolver, projectApi } = setup();
    const credential = await resolver.resolve({ name: 'meter', deviceKey: 'K1', createIfMissing: true });
    expect(credential).toMatchObject({ deviceId: 'id-K1', accessToken: 'at-id-K1', source: 'api' });
    expect(projectApi.calls).toEqual(['create:K1', 'cert:id-K1']);
  });

  it('falls back to the device-key endpoint when interface A cannot help', async () => {
    const { resolver, keyApi } = setup({ projectKey: 'pk-global' });
    const credential = await resolver.resolve({ name: 'meter', deviceKey: 'K2', typeKey: 'T' });
    expect(credential).toEqual({ deviceId: 'dk-K2', accessToken: 'at-dk-K2', projectKey: 'pk-global', source: 'device-key' });
    expect(keyApi.calls).toEqual([{ projectKey: 'pk-global', deviceKey: 'K2', typeKey: 'T' }]);
  });

  it('explains every failed source when nothing works', async () => {
    const { resolver } = setup({ projectKey: 'pk' });
    const err = await resolver.resolve({ name: 'ghost', deviceId: 'nope', deviceKey: 'unknown' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CredentialUnavailableError);
    expect((err as Error).message).toBe('no cloud credential for device "ghost": site file has no access_token/project_key; '
      + 'nothing stored; interface A: GET /api/v1/device/<id>/certificate refused by the cloud (errcode 404): device not found; '
      + 'device-key certificate: POST /device/v1/certificate refused by the cloud (errcode 404): unknown device key');
  });

  it('refetches a stored credential after the broker refused it, keeping its device id', async () => {
    const { resolver, projectApi, store } = setup({ keyApi: false });
    await store.set('pump', { deviceId: 'd1', accessToken: 'old', projectKey: 'pk', source: 'api', fetchedAt: 1 });
    const identity: DeviceIdentity = { name: 'pump' };
    expect((await resolver.resolve(identity)).accessToken).toBe('old');
    await resolver.invalidate(identity);
    expect(store.get('pump')?.invalidatedAt).toBeDefined();
    expect(await resolver.resolve(identity)).toMatchObject({ accessToken: 'at-d1', source: 'api' });
    expect(projectApi.calls).toEqual(['cert:d1']);
    expect(store.get('pump')?.invalidatedAt).toBeUndefined();
  });

  it('moves past a refused site credential to the API', async () => {
    const { resolver } = setup();
    const identity: DeviceIdentity = { name: 'pump', deviceId: 'd1', accessToken: 'bad', projectKey: 'pk' };
    expect((await resolver.resolve(identity)).source).toBe('site');
    await resolver.invalidate(identity);
    expect(await resolver.resolve(identity)).toMatchObject({ accessToken: 'at-d1', source: 'api' });
  });

  it('adds every credential it hands out to the known secrets, so logs redact it anywhere', async () => {
    const secrets = new SecretValues();
    const store = new CredentialStore(path);
    const resolver = new CredentialResolver({ store, log: silentLogger(), projectApi: new FakeProjectApi(), secrets });
    await resolver.resolve({ name: 'pump', deviceId: 'd1' });
    await resolver.resolve({ name: 'fan', accessToken: 'site-token-42', projectKey: 'site-pk-42' });
    expect(secrets.redact('token at-d1 is refused')).toBe('token at-d1 is refused'); // 5 characters: too short to match safely
    expect(secrets.redact('echo site-token-42 / site-pk-42')).toBe('echo [redacted] / [redacted]');
  });

  it('shares one lookup between concurrent callers', async () => {
    const { resolver, projectApi } = setup();
    await Promise.all([resolver.resolve({ name: 'p', deviceId: 'd1' }), resolver.resolve({ name: 'p', deviceId: 'd1' })]);
    expect(projectApi.calls).toEqual(['cert:d1']);
  });

  it('never writes a secret into the log', async () => {
    const lines: string[] = [];
    const destination = { write: (line: string) => { lines.push(line); return true; } } as unknown as NodeJS.WritableStream;
    const store = new CredentialStore(path);
    const resolver = new CredentialResolver({ store, log: createLogger({ level: 'debug', destination }), projectApi: new FakeProjectApi() });
    await resolver.resolve({ name: 'pump', deviceId: 'd1' });
    await resolver.invalidate({ name: 'pump' });
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('')).not.toContain('at-d1');
  });
});
