// The interface-B sync takes its credential from the credential service, not from the MQTT
// connect: with the broker unreachable, the cloud's values still reach the device.
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/gateway.js';
import type { GatewayHandle } from '../../src/gateway-types.js';
import { silentLogger } from '../../src/ops/log.js';
import { deviceApi, meterDevice, startSite, waitFor, type Site } from './harness.js';

const TOKEN = 'demo-meter-1-token';

async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('interface-B sync without the broker', () => {
  let site: Site | undefined;
  let gateway: GatewayHandle | undefined;
  afterEach(async () => {
    await gateway?.stop();
    await site?.close();
    gateway = undefined;
    site = undefined;
  });

  it('applies the cloud values of writable points while MQTT has never connected', async () => {
    site = await startSite();
    const s = site;
    // Stored in the cloud while the device is offline: only a sync can bring them to the device.
    const stored = await deviceApi(s, TOKEN, 'POST', '/attributes', { setpoint: 42.5, pump: true, voltage: 999 });
    expect(stored.result).toBe(1);
    expect(s.sim.simulator.getRegister(1, 'holding', 0)).toBe(215);
    const config = s.config([meterDevice('meter-1', 1, TOKEN)], { mqttUrl: `mqtt://127.0.0.1:${await deadPort()}`, syncPeriodMs: 200 });
    gateway = await startGateway(config, { logger: silentLogger(), env: {} });
    await waitFor(() => (s.sim.simulator.getRegister(1, 'holding', 0) === 425 ? true : undefined));
    await waitFor(() => (s.sim.simulator.getRegister(1, 'coil', 0) === 1 ? true : undefined));
    // A read-only point is never written, whatever the cloud holds for it.
    expect(s.sim.simulator.getRegister(1, 'input', 0)).toBe(2301);
    const status = gateway.status();
    expect(status.links).toEqual([expect.objectContaining({ device: 'meter-1', state: 'down', publishes: 0 })]);
  });
});
