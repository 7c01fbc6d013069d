// The gateway uplink path with fakes for the state: scoping, partial batches, answers, bounds.
import { beforeEach, describe, expect, it } from 'vitest';
import type { ChannelEvents, CommandMessage, GatewayEvents } from '../../../packages/emulator/src/channel.js';
import { UplinkHandler } from '../../../packages/emulator/src/channel/uplink.js';
import { captureLogger, type CapturedLog } from '../../helpers/capture-logger.js';

const NOW = 1_800_000_000_000;
/** gateway id -> address -> sub-device id */
const BINDINGS: Record<string, Record<string, string>> = {
  'gw-1': { 1: 'sub-1', 2: 'sub-2' },
  'gw-2': { 1: 'sub-3' },
};

class FakeState implements ChannelEvents, GatewayEvents {
  readonly calls: unknown[][] = [];
  onConnected(): void {}
  onDisconnected(): void {}
  onReport(deviceId: string, attributes: Record<string, unknown>): void {
    this.calls.push(['report', deviceId, attributes]);
  }
  onAttributesGet(deviceId: string, keys: string[] | undefined): Record<string, unknown> {
    this.calls.push(['get', deviceId, keys]);
    return { owner: deviceId };
  }
  onCommandReply(deviceId: string, reply: CommandMessage, topicId: string): void {
    this.calls.push(['reply', deviceId, reply, topicId]);
  }
  onEvent(deviceId: string, topicId: string, event: unknown): void {
    this.calls.push(['event', deviceId, topicId, event]);
  }
  onStreamData(): void {}
  isGateway(deviceId: string): boolean {
    return deviceId in BINDINGS;
  }
  subDevice(gatewayId: string, addr: string): string | undefined {
    const scope = BINDINGS[gatewayId];
    return scope !== undefined && Object.hasOwn(scope, addr) ? scope[addr] : undefined;
  }
  onSubDeviceConnect(gatewayId: string, subDeviceId: string): void {
    this.calls.push(['connect', gatewayId, subDeviceId]);
  }
  onSubDeviceDisconnect(gatewayId: string, subDeviceId: string): void {
    this.calls.push(['disconnect', gatewayId, subDeviceId]);
  }
}

let state: FakeState;
let log: CapturedLog;
let replies: { deviceId: string; topic: string; body: Record<string, unknown> }[];
let handler: UplinkHandler;

beforeEach(() => {
  state = new FakeState();
  log = captureLogger();
  replies = [];
  handler = new UplinkHandler(
    state, (deviceId, topic, payload) => replies.push({ deviceId, topic, body: JSON.parse(payload.toString('utf8')) as Record<string, unknown> }),
    () => NOW, log.logger, { maxDepth: 8, maxBytes: 4096 }, state,
  );
});

function send(deviceId: string, topic: string, payload: string) {
  const kinds: Record<string, string> = {
    'gateway/attributes': 'report', 'gateway/connect': 'connect', 'gateway/disconnect': 'disconnect',
    'gateway/event/report': 'event', 'gateway/attributes/get': 'attributesGet', 'gateway/command/reply': 'commandReply',
  };
  return handler.handle(deviceId, { kind: 'gateway', message: kinds[topic] as 'report' }, Buffer.from(payload));
}

describe('gateway uplinks', () => {
  it('hands each sub-device its part of a batch and acknowledges', () => {
    expect(send('gw-1', 'gateway/attributes', '{"1":{"v":1},"2":{"v":2}}')).toEqual({ action: 'accept' });
    expect(state.calls).toEqual([['report', 'sub-1', { v: 1 }], ['report', 'sub-2', { v: 2 }]]);
    expect(replies).toEqual([{ deviceId: 'gw-1', topic: 'gateway/attributes/response', body: { result: 1, ts: NOW } }]);
  });

  it('stores the bound part of a batch and names the foreign and unknown addresses', () => {
    // "1" on gw-2 is sub-3; on gw-1 it is sub-1: the same address never crosses gateways.
    send('gw-2', 'gateway/attributes', '{"1":{"v":1},"2":{"v":2},"99":{"v":3}}');
    expect(state.calls).toEqual([['report', 'sub-3', { v: 1 }]]);
    expect(replies[0].body).toEqual({
      result: 0, errcode: 404, message: 'sub-device address not bound to this gateway: "2", "99"', device: '2', devices: ['2', '99'],
    });
    expect(log.count('gateway message refused')).toBe(1);
  });

  it('names at most ten addresses in the message but lists all of them', () => {
    const batch = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`x${i}`, { v: i }]));
    send('gw-1', 'gateway/attributes', JSON.stringify(batch));
    expect(replies[0].body.message).toMatch(/"x9" and 2 more$/);
    expect(replies[0].body.devices).toHaveLength(12);
  });

  it('keeps a huge unknown address out of the log line and the message', () => {
    const addr = 'a'.repeat(3000);
    send('gw-1', 'gateway/connect', JSON.stringify({ device: addr }));
    expect(replies[0].body).toMatchObject({ errcode: 404, device: addr });
    expect(String(replies[0].body.message).length).toBeLessThan(200);
    const line = log.lines().find((l) => l.msg === 'gateway message refused');
    expect(JSON.stringify(line).length).toBeLessThan(600);
  });

  it.each([
    ['gateway/connect', '{"device":"2"}', ['connect', 'gw-1', 'sub-2'], 'gateway/connect/response'],
    ['gateway/disconnect', '{"device":"2"}', ['disconnect', 'gw-1', 'sub-2'], 'gateway/disconnect/response'],
    ['gateway/event/report', '{"device":"1","event":{"method":"trip"}}', ['event', 'sub-1', 'gateway', { method: 'trip', params: {} }], 'gateway/event/response'],
    ['gateway/command/reply', '{"device":"1","command":{"id":5,"method":"m","params":{"r":1}}}', ['reply', 'sub-1', { id: 5, method: 'm', params: { r: 1 } }, '5'], 'gateway/command/reply/response'],
  ])('%s reaches the bound sub-device', (topic, payload, call, responseTopic) => {
    send('gw-1', topic, payload);
    expect(state.calls).toEqual([call]);
    expect(replies).toEqual([{ deviceId: 'gw-1', topic: responseTopic, body: { result: 1, ts: NOW } }]);
  });

  it('answers gateway/attributes/get with the sub-device address', () => {
    send('gw-1', 'gateway/attributes/get', '{"device":"2","keys":["v"]}');
    expect(state.calls).toEqual([['get', 'sub-2', ['v']]]);
    expect(replies[0]).toEqual({ deviceId: 'gw-1', topic: 'gateway/attributes/get/response', body: { device: '2', result: 1, attributes: { owner: 'sub-2' } } });
  });

  it.each([
    ['gateway/connect', '{"device":"2"}', '"2" is bound to gw-1, not gw-2', 'gw-2'],
    ['gateway/connect', '{"device":"1"}', 'gw-3 is no gateway', 'gw-3'],
    ['gateway/connect', '{"device":"sub-1"}', 'a device id is not an address', 'gw-1'],
    ['gateway/disconnect', '{"device":"3"}', 'an unknown address', 'gw-1'],
    ['gateway/event/report', '{"device":"constructor","event":{"method":"m"}}', 'a prototype name', 'gw-1'],
    ['gateway/attributes/get', '{"device":"__proto__"}', 'a prototype name', 'gw-1'],
    ['gateway/command/reply', '{"device":"9","command":{"id":1,"method":"m"}}', 'an unknown address', 'gw-1'],
  ])('refuses %s %s (%s)', (topic, payload, _why, gateway) => {
    send(gateway, topic, payload);
    expect(state.calls).toEqual([]);
    expect(replies[0].body).toMatchObject({ result: 0, errcode: gateway === 'gw-3' ? 403 : 404 });
    expect(log.count('gateway message refused')).toBe(1);
  });

  it('refuses every gateway topic from a device that is not a gateway, naming the address', () => {
    send('direct-1', 'gateway/attributes', '{"1":{"v":1}}');
    send('direct-1', 'gateway/connect', '{"device":"1"}');
    expect(state.calls).toEqual([]);
    expect(replies.map((r) => r.body)).toEqual([
      { result: 0, errcode: 403, message: 'device is not a gateway' },
      { result: 0, errcode: 403, message: 'device is not a gateway', device: '1' },
    ]);
  });

  it('refuses a batch with a duplicated address as a whole', () => {
    send('gw-1', 'gateway/attributes', '{"1":{"v":1},"2":{"v":2},"1":{"v":3}}');
    expect(state.calls).toEqual([]);
    expect(replies[0].body).toEqual({ result: 0, errcode: 400, message: 'sub-device address "1" appears twice in one batch' });
  });

  it('refuses a batch with one bad entry as a whole (nothing half-stored)', () => {
    send('gw-1', 'gateway/attributes', '{"1":{"v":1},"2":{"v":null}}');
    expect(state.calls).toEqual([]);
    expect(replies[0].body).toMatchObject({ result: 0, errcode: 400 });
  });

  it.each([
    ['too deep', `{"1":${'['.repeat(10)}${']'.repeat(10)}}`, 400],
    ['too large', JSON.stringify({ 1: { s: 'x'.repeat(5000) } }), 413],
  ])('answers a %s payload without storing it and keeps the connection', (_name, payload, errcode) => {
    expect(send('gw-1', 'gateway/attributes', payload)).toEqual({ action: 'accept' });
    expect(state.calls).toEqual([]);
    expect(replies[0]).toMatchObject({ topic: 'gateway/attributes/response', body: { result: 0, errcode } });
  });

  it.each(['gateway/attributes', 'gateway/connect', 'gateway/attributes/get', 'gateway/command/reply'])(
    'drops the connection for non-JSON on %s', (topic) => {
      expect(send('gw-1', topic, '{"1":')).toEqual({ action: 'disconnect', reason: 'non-JSON payload on a JSON topic' });
      expect(send('gw-1', topic, '')).toMatchObject({ action: 'disconnect' });
      expect(replies).toEqual([]);
    },
  );

  it('answers 500 when the state throws, and stays up', () => {
    state.onSubDeviceConnect = () => {
      throw new Error('boom');
    };
    send('gw-1', 'gateway/connect', '{"device":"1"}');
    expect(replies[0].body).toEqual({ result: 0, errcode: 500, message: 'internal error' });
    expect(log.count('gateway message handler failed')).toBe(1);
  });
});
