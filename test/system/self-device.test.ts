// fieldgate's own identity against the emulator: its attributes become the cloud's current values
// of the fieldgate device, and commands sent through interface B are answered (read and poll on
// the simulated devices, status, log_level, and refusals).
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import { silentLogger } from '../../src/ops/log.js';
import type { DeviceConfig } from '../../src/core/config/site-types.js';
import { deviceApi, meterDevice, startSite, waitFor, type Site } from './harness.js';

const OWN_TOKEN = 'demo-gateway-token';

describe('fieldgate as a cloud device of its own', () => {
  let site: Site | undefined;
  let gateway: GatewayHandle | undefined;
  afterEach(async () => {
    await gateway?.stop();
    await site?.close();
    gateway = undefined;
    site = undefined;
  });

  async function start(devices: DeviceConfig[] = [meterDevice('meter-1', 1, 'demo-meter-1-token')]): Promise<Site> {
    site = await startSite();
    const identity = { accessToken: OWN_TOKEN, allowCreate: false, reportIntervalMs: 5000, minReportGapMs: 1000 };
    gateway = await startGateway(site.config(devices, { identity }), { logger: silentLogger(), env: {} });
    return site;
  }

  async function command(s: Site, method: string, params: unknown, id: number): Promise<Record<string, unknown>> {
    const reply = await deviceApi(s, OWN_TOKEN, 'POST', '/command/sync/send', { method, params, id });
    expect(reply).toMatchObject({ result: 1, command: { method, id } });
    return (reply.command as { params: Record<string, unknown> }).params;
  }

  it('reports its own attributes as the fieldgate device\'s current values, and follows a device going online', async () => {
    const s = await start();
    const online = await waitFor(async () => {
      const attributes = (await deviceApi(s, OWN_TOKEN, 'GET', '/attributes')).attributes as Record<string, unknown> | undefined;
      return attributes?.devices_online === 1 ? attributes : undefined;
    });
    // Links: meter-1's and the identity's own (@fieldgate).
    expect(online).toMatchObject({ devices_total: 1, buses_total: 1, buses_up: 1, links_total: 2 });
    expect(online.rss_mb).toBeGreaterThan(10);
    expect(typeof online.version).toBe('string');
  });

  it('answers read, poll, status and log_level through interface B, and refuses the rest', async () => {
    const s = await start();
    await waitFor(() => (gateway?.status().devices[0]?.online ? true : undefined));
    await waitFor(async () => ((await deviceApi(s, OWN_TOKEN, 'GET', '/attributes')).attributes ? true : undefined));
    expect(await command(s, 'read', { bus: 'plant', unit: 1, address: 0, count: 2 }, 11)).toEqual({ bus: 'plant', unit: 1, table: 'holding', address: 0, raw: [215, 1450] });
    expect(await command(s, 'read', { bus: 'plant', unit: 1, table: 'input', address: 0, type: 'int16' }, 12)).toMatchObject({ values: [{ address: 0, value: 2301 }] });
    s.sim.simulator.setRegister(1, 'input', 0, 2350);
    expect(await command(s, 'poll', { device: 'meter-1' }, 13)).toMatchObject({ device: 'meter-1', values: { voltage: 235, speed: 1450 } });
    expect(await command(s, 'status', {}, 14)).toMatchObject({ devices: { online: 1, total: 1 }, buses: [{ name: 'plant', up: true }] });
    expect(await command(s, 'log_level', { level: 'debug', durationS: 30 }, 15)).toMatchObject({ level: 'debug', previous: 'silent' });
    expect(await command(s, 'reboot', {}, 16)).toMatchObject({ error: { code: 404 } });
    expect(await command(s, 'read', { bus: 'plant', unit: 1, address: 0, count: 126 }, 17)).toMatchObject({ error: { code: 400 } });
  });

  it('in gateway mode the one identity link carries both: sub-device commands and the own commands, each answered once', async () => {
    const sub = meterDevice('meter-4', 2, 'demo-meter-4-token');
    const s = await start([{ ...sub, cloud: { ...sub.cloud!, mode: 'gateway', subDeviceAddress: '4' } }]);
    await waitFor(() => (s.emulator.state.isOnline('dev-meter-4') ? true : undefined));
    expect(await command(s, 'read', { bus: 'plant', unit: 2, address: 0 }, 21)).toMatchObject({ raw: [100] });
    expect(await command(s, 'poll', { device: 'meter-4' }, 22)).toMatchObject({ device: 'meter-4', values: { setpoint: 10 } });
    const subReply = await deviceApi(s, 'demo-meter-4-token', 'POST', '/command/sync/send', { method: 'set_speed', params: { rpm: 900 }, id: 23 });
    expect(subReply).toMatchObject({ result: 1, command: { method: 'set_speed', id: 23, params: { speed: 900 } } });
    expect(gateway?.status().links.map((l) => l.device)).toEqual(['@fieldgate']);
  });
});
