// The state's side of the channel contract, with a fake channel (no sockets).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { DeviceChannel } from '../../../packages/emulator/src/channel.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { DeviceLink } from '../../../packages/emulator/src/device-link.js';
import { parseSeed } from '../../../packages/emulator/src/state/seed.js';
import { EmulatorState } from '../../../packages/emulator/src/state/state.js';
import { silentLogger } from '../../../src/ops/log.js';

const NOW = Date.UTC(2026, 0, 1);
const sample = readFileSync(new URL('../../../config/emulator-seed.yaml', import.meta.url), 'utf8');

function setup(timeoutMs = 50) {
  const clock = new ManualClock(NOW);
  const state = new EmulatorState(parseSeed(sample, NOW), clock);
  const link = new DeviceLink(state, silentLogger(), timeoutMs);
  const sent: { deviceId: string; topic: string; payload: string }[] = [];
  const tcp: Buffer[] = [];
  const channel: DeviceChannel = {
    publish: async (deviceId, topic, payload) => { sent.push({ deviceId, topic, payload: payload.toString() }); return true; },
    sendTcp: (_id, data) => { tcp.push(data); return true; },
    isOnline: () => true, stats: () => ({ packetsTooLarge: 0 }), mqttPort: 1, tcpPort: 2, close: async () => {},
  };
  link.attach(channel);
  return { clock, state, link, sent, tcp };
}

describe('DeviceLink', () => {
  it('authenticates by access token and project key', () => {
    const { link } = setup();
    expect(link.authenticate('demo-meter-1-token', 'demo-project-key')).toBe('dev-meter-1');
    expect(link.authenticate('demo-meter-1-token', 'other')).toBeUndefined();
    expect(link.authenticate('other', 'demo-project-key')).toBeUndefined();
  });

  it('is online while any channel is connected', () => {
    const { link, state } = setup();
    link.onConnected('dev-meter-1', 'mqtt');
    link.onConnected('dev-meter-1', 'tcp');
    link.onDisconnected('dev-meter-1', 'mqtt');
    expect(state.isOnline('dev-meter-1')).toBe(true);
    link.onDisconnected('dev-meter-1', 'tcp');
    expect(state.isOnline('dev-meter-1')).toBe(false);
    expect(state.isActive(state.devices.get('dev-meter-2')!)).toBe(false);
    link.onConnected('dev-meter-2', 'mqtt');
    expect(state.isActive(state.devices.get('dev-meter-2')!)).toBe(true);
  });

  it('records reports, events and stream data with the receive time', () => {
    const { link, state, clock } = setup();
    clock.advance(5);
    link.onReport('dev-meter-2', { a: 1 });
    link.onEvent('dev-meter-2', '3', { method: 'overheat', params: { t: 90 } });
    link.onStreamData('dev-meter-2', 'serial_raw', Buffer.from([1]));
    const d = state.devices.get('dev-meter-2')!;
    expect(d.attributes.get('a')).toEqual({ value: 1, attr_type: 'report', ts: NOW + 5 });
    expect(d.active).toEqual({ attributes: NOW + 5, event: NOW + 5, data: NOW + 5 });
    expect(link.onAttributesGet('dev-meter-2', ['a', 'b'])).toEqual({ a: 1 });
    expect(link.onAttributesGet('nope', undefined)).toEqual({});
    expect(link.eventLog.get('dev-meter-2')).toHaveLength(1);
    expect(() => link.onReport('nope', { a: 1 })).not.toThrow();
  });

  it('frames pushes on the documented topics', async () => {
    const { link, sent, tcp } = setup();
    await link.pushAttributes('dev-meter-1', { x: 1 });
    await link.sendCommand('dev-meter-1', { method: 'm', params: {}, id: 4 });
    await link.pushStream('dev-meter-1', 'serial_raw', 'mqtt', Buffer.from('hi'));
    await link.pushStream('dev-meter-1', 'serial_raw', 'tcp', Buffer.from('yo'));
    expect(sent.map((s) => [s.topic, s.payload])).toEqual([
      ['attributes/push', '{"x":1}'], ['command/send/4', '{"method":"m","params":{},"id":4}'], ['data/serial_raw/set', 'hi'],
    ]);
    expect(tcp.map(String)).toEqual(['yo']);
  });

  it('matches sync replies by payload id first, then by topic id, and only for the same device', async () => {
    const { link } = setup(2000);
    const a = link.sendCommandSync('dev-meter-1', { method: 'a', params: {}, id: 1 });
    const b = link.sendCommandSync('dev-meter-1', { method: 'b', params: {}, id: 2 });
    link.onCommandReply('dev-meter-2', { method: 'a', params: {}, id: 1 }, '1');
    link.onCommandReply('dev-meter-1', { method: 'b', params: { r: 2 }, id: 2 }, '1');
    link.onCommandReply('dev-meter-1', { method: 'a', params: { r: 1 }, id: 77 }, '1');
    expect(await a).toEqual({ method: 'a', params: { r: 1 }, id: 77 });
    expect(await b).toEqual({ method: 'b', params: { r: 2 }, id: 2 });
  });

  it('answers undefined after the timeout, and on shutdown', async () => {
    const { link } = setup(30);
    expect(await link.sendCommandSync('dev-meter-1', { method: 'a', params: {}, id: 1 })).toBeUndefined();
    const slow = new DeviceLink(setup().state, silentLogger(), 60_000);
    const pending = slow.sendCommandSync('dev-meter-1', { method: 'a', params: {}, id: 1 });
    slow.cancelWaiters();
    expect(await pending).toBeUndefined();
  });
});
