// DeviceLink's gateway side with a fake channel: scope, online state through the gateway, routing.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { DeviceChannel } from '../../../packages/emulator/src/channel.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { DeviceLink } from '../../../packages/emulator/src/device-link.js';
import { parseSeed } from '../../../packages/emulator/src/state/seed.js';
import { EmulatorState } from '../../../packages/emulator/src/state/state.js';
import { silentLogger } from '../../../src/ops/log.js';

const NOW = Date.UTC(2026, 0, 1);
const seed = readFileSync(new URL('../../integration/emulator/fixtures/gateway-seed.yaml', import.meta.url), 'utf8');

function setup() {
  const state = new EmulatorState(parseSeed(seed, NOW), new ManualClock(NOW));
  const link = new DeviceLink(state, silentLogger(), 50);
  const sent: { deviceId: string; topic: string; payload: unknown }[] = [];
  const channel: DeviceChannel = {
    publish: async (deviceId, topic, payload) => { sent.push({ deviceId, topic, payload: JSON.parse(payload.toString()) }); return true; },
    sendTcp: () => true, isOnline: () => true, stats: () => ({ packetsTooLarge: 0 }), mqttPort: 1, tcpPort: 2, close: async () => {},
  };
  link.attach(channel);
  return { state, link, sent };
}

describe('DeviceLink for gateways', () => {
  it('lets gateways and direct devices log in, never a sub-device', () => {
    const { link } = setup();
    expect(['gw-1-token', 'direct-token', 'sub-1-token', 'sub-free-token'].map((t) => link.authenticate(t, 'demo-project-key')))
      .toEqual(['dev-gw-1', 'dev-direct', undefined, undefined]);
  });

  it('scopes addresses to their gateway', () => {
    const { link } = setup();
    expect(link.isGateway('dev-gw-1')).toBe(true);
    expect(link.isGateway('dev-direct')).toBe(false);
    expect(link.isGateway('dev-sub-1')).toBe(false);
    expect(link.isGateway('nope')).toBe(false);
    expect(link.subDevice('dev-gw-1', '1')).toBe('dev-sub-1');
    expect(link.subDevice('dev-gw-2', '1')).toBe('dev-sub-3');
    expect(link.subDevice('dev-gw-2', '2')).toBeUndefined();
    expect(link.subDevice('dev-direct', '1')).toBeUndefined();
  });

  it('takes sub-devices offline with the gateway\'s MQTT connection, not with its TCP stream', () => {
    const { link, state } = setup();
    link.onConnected('dev-gw-1', 'mqtt');
    link.onConnected('dev-gw-1', 'tcp');
    link.onSubDeviceConnect('dev-gw-1', 'dev-sub-1');
    link.onSubDeviceConnect('dev-gw-1', 'dev-sub-2');
    link.onDisconnected('dev-gw-1', 'tcp');
    expect([state.isOnline('dev-sub-1'), state.isOnline('dev-sub-2')]).toEqual([true, true]);
    link.onDisconnected('dev-gw-1', 'mqtt');
    expect([state.isOnline('dev-sub-1'), state.isOnline('dev-sub-2')]).toEqual([false, false]);
    expect(state.devices.get('dev-sub-1')?.active.connect).toBe(NOW);
  });

  it('routes pushes and commands for a sub-device to its gateway, by address', async () => {
    const { link, sent } = setup();
    expect(await link.pushAttributes('dev-sub-2', { a: 1 })).toBe(true);
    link.gatewayPushShape = 'device';
    await link.pushAttributes('dev-sub-3', { b: 2 });
    await link.sendCommand('dev-sub-1', { method: 'm', params: {}, id: 3 });
    await link.pushAttributes('dev-direct', { c: 3 });
    expect(sent).toEqual([
      { deviceId: 'dev-gw-1', topic: 'gateway/attributes/push', payload: { 2: { a: 1 } } },
      { deviceId: 'dev-gw-2', topic: 'gateway/attributes/push', payload: { device: '1', attributes: { b: 2 } } },
      { deviceId: 'dev-gw-1', topic: 'gateway/command/send', payload: { device: '1', command: { id: 3, method: 'm', params: {} } } },
      { deviceId: 'dev-direct', topic: 'attributes/push', payload: { c: 3 } },
    ]);
  });

  it('drops messages for an unbound sub-device', async () => {
    const { link, sent } = setup();
    expect(await link.pushAttributes('dev-sub-free', { a: 1 })).toBe(false);
    expect(await link.sendCommand('dev-sub-free', { method: 'm', params: {}, id: 1 })).toBe(false);
    expect(sent).toEqual([]);
  });

  it('unbinds and takes offline the sub-devices of a deleted gateway', () => {
    const { link, state } = setup();
    link.onSubDeviceConnect('dev-gw-1', 'dev-sub-1');
    state.deleteDevice('dev-gw-1');
    expect(state.isOnline('dev-sub-1')).toBe(false);
    expect(state.devices.get('dev-sub-1')?.binding).toBeUndefined();
    expect(link.subDevice('dev-gw-1', '1')).toBeUndefined();
    expect(state.devices.get('dev-sub-3')?.binding).toEqual({ gateway: 'dev-gw-2', addr: '1' });
  });
});
