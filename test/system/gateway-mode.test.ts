// Gateway mode end to end: emulator (cloud) + simulator (devices) + the real daemon, on a mixed
// site. meter-1 keeps its own link; meter-4 (unit 2, address "4") reaches the cloud only through
// fieldgate's identity dev-fieldgate; "stray" claims address "9", which is bound to nobody.
import { connectAsync } from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import type { DeviceConfig } from '../../src/core/config/site-types.js';
import { captureLogger } from '../helpers/capture-logger.js';
import { deviceApi, meterDevice, PROJECT_KEY, startSite, waitFor, type Site } from './harness.js';

const IDENTITY = { accessToken: 'demo-gateway-token', allowCreate: false };

function subDevice(device: DeviceConfig, address: string): DeviceConfig {
  return { ...device, cloud: { ...device.cloud!, mode: 'gateway', subDeviceAddress: address } };
}

describe('gateway mode', () => {
  let site: Site | undefined;
  let gateway: GatewayHandle | undefined;
  afterEach(async () => {
    await gateway?.stop();
    await site?.close();
    gateway = undefined;
    site = undefined;
  });

  async function attributes(s: Site, token: string): Promise<Record<string, unknown>> {
    const body = await deviceApi(s, token, 'GET', '/attributes');
    return (body.attributes ?? {}) as Record<string, unknown>;
  }

  async function mixedSite() {
    site = await startSite();
    const s = site;
    const capture = captureLogger();
    const devices = [
      meterDevice('meter-1', 1, 'demo-meter-1-token'),
      subDevice(meterDevice('meter-4', 2, 'demo-meter-4-token'), '4'),
      subDevice(meterDevice('stray', 1, 'demo-meter-3-token'), '9'),
    ];
    gateway = await startGateway(s.config(devices, { identity: IDENTITY, mode: 'direct' }), { logger: capture.logger, env: {} });
    return { s, capture, gateway };
  }

  it('a mixed site: direct and sub-device reports both arrive, the sub-device online by gateway/connect, an unbound address refused and logged', async () => {
    const { s, capture, gateway: g } = await mixedSite();
    await waitFor(async () => ((await attributes(s, 'demo-meter-1-token')).voltage === 230.1 ? true : undefined));
    await waitFor(async () => ((await attributes(s, 'demo-meter-4-token')).setpoint === 10 ? true : undefined));
    expect(await attributes(s, 'demo-meter-4-token')).toMatchObject({ setpoint: 10, online: true });
    await waitFor(() => (s.emulator.state.isOnline('dev-meter-4') ? true : undefined));
    // Two links: meter-1's own and the identity's; no link for meter-4 or stray.
    expect(g.status().links.map((l) => l.device).sort()).toEqual(['@fieldgate', 'meter-1']);
    // The cloud refuses address "9" (not bound to dev-fieldgate): nothing stored for the device
    // behind that token, and the refusal is logged once, not per report.
    await waitFor(() => capture.lines().find((l) => l.msg === 'cloud refused a gateway message'));
    expect(await attributes(s, 'demo-meter-3-token')).toEqual({});
    s.sim.simulator.setRegister(2, 'holding', 0, 333);
    await waitFor(async () => ((await attributes(s, 'demo-meter-4-token')).setpoint === 33.3 ? true : undefined));
    expect(capture.lines().filter((l) => l.msg === 'cloud refused a gateway message').length).toBeLessThanOrEqual(2);
  });

  it('refused reports of an unbound address: one warning naming the device and its address, counted per device in status and by the own device', async () => {
    const { s, capture, gateway: g } = await mixedSite();
    const subStatus = (name: string) => g.status().devices.find((d) => d.name === name)?.subDevice;
    await waitFor(() => ((subStatus('stray')?.reportsRefused ?? 0) >= 1 ? true : undefined));
    // Another value on unit 1: stray reports again and is refused again, without a second warning.
    s.sim.simulator.setRegister(1, 'holding', 0, 444);
    await waitFor(() => ((subStatus('stray')?.reportsRefused ?? 0) >= 2 ? true : undefined));
    const warnings = capture.lines().filter((l) => l.msg === 'cloud refuses the reports of a sub-device');
    expect(warnings).toEqual([expect.objectContaining({ device: 'stray', subDevice: '9', errcode: 404, reason: expect.stringContaining('not bound to this gateway') })]);
    expect(subStatus('stray')).toMatchObject({ address: '9', refused: true });
    expect(subStatus('meter-4')).toEqual({ address: '4', reportsRefused: 0, refused: false });
    expect(g.status().devices.find((d) => d.name === 'meter-1')?.subDevice).toBeUndefined();
    // fieldgate's own device reports it (a change of sub-devices refused is reported within the gap).
    const own = await waitFor(async () => {
      const a = await attributes(s, 'demo-gateway-token');
      return a.sub_devices_refused === 1 && Number(a.sub_device_reports_refused) >= 1 ? a : undefined;
    }, 30_000);
    expect(own).toMatchObject({ sub_devices_refused: 1 });
  });

  it('sub-device online/offline follows the bus', async () => {
    const { s } = await mixedSite();
    await waitFor(() => (s.emulator.state.isOnline('dev-meter-4') ? true : undefined));
    s.sim.simulator.setFault(2, { timeout: true });
    await waitFor(() => (s.emulator.state.isOnline('dev-meter-4') ? undefined : true));
    expect(s.emulator.state.isOnline('dev-meter-1')).toBe(true);
    await waitFor(async () => ((await attributes(s, 'demo-meter-4-token')).online === false ? true : undefined));
    s.sim.simulator.clearFault(2);
    await waitFor(() => (s.emulator.state.isOnline('dev-meter-4') ? true : undefined));
  });

  it('a push and a sync command to a sub-device go through the gateway and are answered', async () => {
    const { s } = await mixedSite();
    await waitFor(() => (s.emulator.state.isOnline('dev-meter-4') ? true : undefined));
    const pushed = await deviceApi(s, 'demo-meter-4-token', 'POST', '/attributes', { setpoint: 42.5, speed: 99999 });
    expect(pushed.result).toBe(1);
    await waitFor(() => (s.sim.simulator.getRegister(2, 'holding', 0) === 425 ? true : undefined));
    // Out of range: never written.
    expect(s.sim.simulator.getRegister(2, 'holding', 1)).toBe(0);
    const reply = await deviceApi(s, 'demo-meter-4-token', 'POST', '/command/sync/send', { method: 'set_speed', params: { rpm: 1200 }, id: 77 });
    expect(reply).toMatchObject({ result: 1 });
    expect(JSON.stringify(reply)).toContain('1200');
    expect(s.sim.simulator.getRegister(2, 'holding', 1)).toBe(1200);
    const bad = await deviceApi(s, 'demo-meter-4-token', 'POST', '/command/sync/send', { method: 'set_speed', params: {}, id: 78 });
    expect(JSON.stringify(bad)).toMatch(/error/);
    // meter-1 on the same unit map was never touched by the sub-device's writes.
    expect(s.sim.simulator.getRegister(1, 'holding', 0)).toBe(215);
  });

  it('hostile inbound on the gateway topics: foreign address, malformed pushes, deep and huge payloads, a flood; the gateway keeps serving', async () => {
    const { s, capture } = await mixedSite();
    await waitFor(() => (s.emulator.state.isOnline('dev-meter-4') ? true : undefined));
    // The cloud only ever sends these on the gateway's own topics; inject them through the broker
    // as the cloud would, with the emulator's link.
    const link = s.emulator.link as unknown as { publish(id: string, topic: string, payload: Buffer): Promise<boolean> };
    const send = (topic: string, payload: string) => link.publish('dev-fieldgate', topic, Buffer.from(payload));
    const hostile: [string, string][] = [
      ['gateway/attributes/push', JSON.stringify({ 77: { setpoint: 1 } })],
      ['gateway/attributes/push', JSON.stringify({ device: '4', attributes: 'nope' })],
      ['gateway/attributes/push', JSON.stringify({ 4: null })],
      ['gateway/attributes/push', JSON.stringify({ '': { setpoint: 1 } })],
      ['gateway/attributes/push', '['.repeat(5000) + ']'.repeat(5000)],
      ['gateway/attributes/push', JSON.stringify({ 4: { setpoint: 'x'.repeat(70_000) } })],
      ['gateway/command/send', JSON.stringify({ device: '__proto__', command: { id: 1, method: 'set_speed', params: { rpm: 5 } } })],
      ['gateway/command/send', JSON.stringify({ command: { id: 2, method: 'set_speed' } })],
    ];
    for (const [topic, payload] of hostile) await send(topic, payload);
    for (let i = 0; i < 300; i += 1) await send('gateway/attributes/push', JSON.stringify({ [`f${i % 1000}`]: { setpoint: 2 } }));
    // A real push still goes through afterwards.
    await send('gateway/attributes/push', JSON.stringify({ device: '4', attributes: { setpoint: 12.5 } }));
    await waitFor(() => (s.sim.simulator.getRegister(2, 'holding', 0) === 125 ? true : undefined));
    const unknown = capture.lines().filter((l) => l.msg === 'message for an unknown sub-device address refused');
    // Logged once per address, bounded: the flood's 300 addresses past the default bound of 256 are only counted.
    expect(unknown.length).toBeGreaterThan(200);
    expect(unknown.length).toBeLessThanOrEqual(256);
    expect(new Set(unknown.map((l) => l.subDevice)).size).toBe(unknown.length);
    expect(s.sim.simulator.getRegister(2, 'holding', 1)).toBe(0);
  });
});

describe('gateway mode: connection of its own', () => {
  it('a sub-device cannot log in on its own (the cloud refuses it): reports only travel through the identity', async () => {
    const s = await startSite();
    try {
      const attempt = connectAsync(`mqtt://127.0.0.1:${s.emulator.mqttPort}`, { clientId: 'dev-meter-4', username: 'demo-meter-4-token', password: PROJECT_KEY, reconnectPeriod: 0, connectTimeout: 3000 });
      await expect(attempt).rejects.toThrow();
    } finally {
      await s.close();
    }
  });
});
