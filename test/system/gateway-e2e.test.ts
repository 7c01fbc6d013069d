// End to end on loopback: emulator (cloud) + simulator (devices) + the real gateway.
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import { silentLogger } from '../../src/ops/log.js';
import { freePort } from '../helpers/mosquitto.js';
import { deviceApi, meterDevice, startSite, waitFor, type Site } from './harness.js';

const TOKEN = 'demo-meter-1-token';

describe('gateway end to end', () => {
  let site: Site | undefined;
  let gateway: GatewayHandle | undefined;
  afterEach(async () => {
    await gateway?.stop();
    await site?.close();
    gateway = undefined;
    site = undefined;
  });

  async function attributes(s: Site): Promise<Record<string, unknown>> {
    const body = await deviceApi(s, TOKEN, 'GET', '/attributes');
    return (body.attributes ?? {}) as Record<string, unknown>;
  }

  it('reports polled values and a value change reaches the cloud attributes', async () => {
    site = await startSite();
    const s = site;
    gateway = await startGateway(s.config([meterDevice('meter-1', 1, TOKEN)]), { logger: silentLogger(), env: {} });
    await waitFor(async () => ((await attributes(s)).voltage === 230.1 ? true : undefined));
    expect(await attributes(s)).toMatchObject({ setpoint: 21.5, speed: 1450, voltage: 230.1, pump: false, online: true });
    s.sim.simulator.setRegister(1, 'input', 0, 2350);
    await waitFor(async () => ((await attributes(s)).voltage === 235 ? true : undefined));
    const status = gateway.status();
    expect(status.links).toEqual([expect.objectContaining({ device: 'meter-1', state: 'up' })]);
    expect(status.devices[0]).toMatchObject({ name: 'meter-1', online: true, points: 4 });
  });

  it('a push via interface B reaches the register and the read-back comes back to the cloud', async () => {
    site = await startSite();
    const s = site;
    gateway = await startGateway(s.config([meterDevice('meter-1', 1, TOKEN)]), { logger: silentLogger(), env: {} });
    await waitFor(async () => ((await attributes(s)).online === true ? true : undefined));
    const pushed = await deviceApi(s, TOKEN, 'POST', '/attributes', { setpoint: 42.5, pump: true, bogus: 1, speed: 99999 });
    expect(pushed.result).toBe(1);
    await waitFor(() => (s.sim.simulator.getRegister(1, 'holding', 0) === 425 ? true : undefined));
    await waitFor(() => (s.sim.simulator.getRegister(1, 'coil', 0) === 1 ? true : undefined));
    // Out-of-range and unknown keys never touch the bus.
    expect(s.sim.simulator.getRegister(1, 'holding', 1)).toBe(1450);
    await waitFor(async () => {
      const a = await attributes(s);
      return a.setpoint === 42.5 && a.pump === true ? a : undefined;
    });
  });

  it('a synchronous command via interface B returns the device reply; errors are answered too', async () => {
    site = await startSite();
    const s = site;
    gateway = await startGateway(s.config([meterDevice('meter-1', 1, TOKEN)]), { logger: silentLogger(), env: {} });
    await waitFor(async () => ((await attributes(s)).online === true ? true : undefined));
    const reply = await deviceApi(s, TOKEN, 'POST', '/command/sync/send', { method: 'set_speed', params: { rpm: 1200 }, id: 77 });
    expect(reply).toMatchObject({ result: 1, command: { method: 'set_speed', id: 77, params: { speed: 1200, voltage: 230.1 } } });
    expect(s.sim.simulator.getRegister(1, 'holding', 1)).toBe(1200);
    const bad = await deviceApi(s, TOKEN, 'POST', '/command/sync/send', { method: 'set_speed', params: { rpm: -5 }, id: 78 });
    expect(bad).toMatchObject({ result: 1, command: { id: 78, params: { error: { code: 422 } } } });
    const unknown = await deviceApi(s, TOKEN, 'POST', '/command/sync/send', { method: 'launch', params: {}, id: 79 });
    expect(unknown).toMatchObject({ result: 1, command: { id: 79, params: { error: { code: 404 } } } });
  });

  it('reports a device that stops answering as offline once, and never re-sends stale values as fresh', async () => {
    site = await startSite();
    const s = site;
    gateway = await startGateway(s.config([meterDevice('meter-1', 1, TOKEN), meterDevice('meter-2', 2, 'demo-meter-2-token')]), { logger: silentLogger(), env: {} });
    await waitFor(async () => ((await attributes(s)).online === true ? true : undefined));
    s.sim.simulator.setFault(1, { timeout: true });
    await waitFor(async () => ((await attributes(s)).online === false ? true : undefined));
    // The other device on the same bus keeps being polled and reported.
    s.sim.simulator.setRegister(2, 'holding', 0, 333);
    await waitFor(async () => {
      const b = await deviceApi(s, 'demo-meter-2-token', 'GET', '/attributes');
      return (b.attributes as Record<string, unknown> | undefined)?.setpoint === 33.3 ? true : undefined;
    });
    expect(gateway.status().devices.find((d) => d.name === 'meter-1')?.online).toBe(false);
  });

  it('an interface-B sync applies the cloud values of writable points while MQTT is unreachable', async () => {
    site = await startSite();
    const s = site;
    // Stored in the cloud while the device is offline: only a sync can bring them to the device.
    const stored = await deviceApi(s, TOKEN, 'POST', '/attributes', { setpoint: 42.5, pump: true, voltage: 999 });
    expect(stored.result).toBe(1);
    expect(s.sim.simulator.getRegister(1, 'holding', 0)).toBe(215);
    // Nothing listens on the broker port: the sync's credential cannot come from an MQTT connect.
    const config = s.config([meterDevice('meter-1', 1, TOKEN)], { mqttUrl: `mqtt://127.0.0.1:${await freePort()}`, syncPeriodMs: 200 });
    gateway = await startGateway(config, { logger: silentLogger(), env: {} });
    await waitFor(() => (s.sim.simulator.getRegister(1, 'holding', 0) === 425 ? true : undefined));
    await waitFor(() => (s.sim.simulator.getRegister(1, 'coil', 0) === 1 ? true : undefined));
    // A read-only point is never written, whatever the cloud holds for it.
    expect(s.sim.simulator.getRegister(1, 'input', 0)).toBe(2301);
    expect(gateway.status().links).toEqual([expect.objectContaining({ device: 'meter-1', state: 'down', publishes: 0 })]);
  });
});
