// Credentials provisioned through the cloud survive a restart without the API; a device key with
// a type key creates the device in the cloud.
import { statSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import { silentLogger } from '../../src/ops/log.js';
import { freePort as deadPort } from '../helpers/mosquitto.js';
import { deviceApi, meterDevice, startSite, waitFor, type Site } from './harness.js';

const A_KEYS = { appId: 'demo-app', accessKey: 'demo-access-key', secretKey: 'demo-secret-key' };

describe('credentials', () => {
  let site: Site | undefined;
  let gateway: GatewayHandle | undefined;
  afterEach(async () => {
    await gateway?.stop();
    await site?.close();
    gateway = undefined;
  });

  async function online(s: Site, token: string): Promise<true | undefined> {
    const b = await deviceApi(s, token, 'GET', '/attributes');
    return (b.attributes as Record<string, unknown> | undefined)?.online === true ? true : undefined;
  }

  it('fetched through interface A, kept in a 0600 file and used at the next start without the API', async () => {
    site = await startSite();
    const s = site;
    const device = { ...meterDevice('meter-3', 1, ''), cloud: { deviceId: 'dev-meter-3', allowCreate: false } };
    gateway = await startGateway(s.config([device], A_KEYS), { logger: silentLogger(), env: {} });
    await waitFor(() => online(s, 'demo-meter-3-token'));
    await gateway.stop();
    const file = join(s.stateDir, 'credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = readFileSync(file, 'utf8');
    expect(stored).toContain('dev-meter-3');
    expect(stored).toContain('demo-meter-3-token');

    // Restart with the API unreachable: the stored credential must be enough. A fresh value
    // reaching the cloud proves the new link works.
    const dead = `http://127.0.0.1:${await deadPort()}`;
    gateway = await startGateway(s.config([device], { ...A_KEYS, apiBaseUrl: dead }), { logger: silentLogger(), env: {} });
    s.sim.simulator.setRegister(1, 'input', 0, 2399);
    await waitFor(async () => {
      const b = await deviceApi(s, 'demo-meter-3-token', 'GET', '/attributes');
      return (b.attributes as Record<string, unknown> | undefined)?.voltage === 239.9 ? true : undefined;
    });
    expect(gateway.status().links[0]).toMatchObject({ state: 'up' });
  });

  it('a device key with a type key auto-creates the device and connects with its new credential', async () => {
    site = await startSite();
    const s = site;
    const device = { ...meterDevice('meter-new', 1, ''), cloud: { deviceKey: 'meter-new-1', typeKey: 'modbus-meter-type-key', allowCreate: false } };
    gateway = await startGateway(s.config([device]), { logger: silentLogger(), env: {} });
    const stored = await waitFor(() => {
      try {
        const parsed = JSON.parse(readFileSync(join(s.stateDir, 'credentials.json'), 'utf8')) as unknown;
        return JSON.stringify(parsed).includes('meter-new') ? parsed : undefined;
      } catch {
        return undefined;
      }
    });
    const token = /"accessToken":"([^"]+)"/.exec(JSON.stringify(stored))?.[1];
    expect(token).toBeDefined();
    await waitFor(() => online(s, token ?? ''));
  });
});
