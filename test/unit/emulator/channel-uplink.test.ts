import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/ops/log.js';
import type { ChannelEvents } from '../../../packages/emulator/src/channel.js';
import { UplinkHandler } from '../../../packages/emulator/src/channel/uplink.js';
import { DEFAULT_JSON_LIMITS, type JsonLimits } from '../../../packages/emulator/src/json-limits.js';
import type { UplinkTopic } from '../../../packages/emulator/src/channel/scoping.js';

function setup(overrides: Partial<ChannelEvents> = {}, limits: JsonLimits = DEFAULT_JSON_LIMITS) {
  const calls: unknown[][] = [];
  const replies: { deviceId: string; topic: string; body: unknown }[] = [];
  const events: ChannelEvents = {
    onConnected: () => undefined,
    onDisconnected: () => undefined,
    onReport: (...args) => { calls.push(['report', ...args]); },
    onAttributesGet: (...args) => { calls.push(['get', ...args]); return { a: 1 }; },
    onCommandReply: (...args) => { calls.push(['reply', ...args]); },
    onEvent: (...args) => { calls.push(['event', ...args]); },
    onStreamData: (...args) => { calls.push(['stream', ...args]); },
    ...overrides,
  };
  const handler = new UplinkHandler(
    events,
    (deviceId, topic, payload) => replies.push({ deviceId, topic, body: JSON.parse(payload.toString('utf8')) }),
    () => 1_700_000_000_000,
    silentLogger(),
    limits,
  );
  const send = (uplink: UplinkTopic, payload: string | Buffer) =>
    handler.handle('dev-A', uplink, typeof payload === 'string' ? Buffer.from(payload) : payload);
  return { calls, replies, send };
}

const ok = { result: 1, ts: 1_700_000_000_000 };

describe('UplinkHandler', () => {
  it.each([
    ['report', { kind: 'report' }, '{"t":1,"s":"x","b":false,"o":{"k":[1]}}', ['report', 'dev-A', { t: 1, s: 'x', b: false, o: { k: [1] } }], 'attributes/response', ok],
    ['get all', { kind: 'attributesGet', requestId: '1000' }, '{}', ['get', 'dev-A', undefined], 'attributes/get/response/1000', { result: 1, attributes: { a: 1 } }],
    ['get empty payload', { kind: 'attributesGet', requestId: '1' }, '', ['get', 'dev-A', undefined], 'attributes/get/response/1', { result: 1, attributes: { a: 1 } }],
    ['get keys', { kind: 'attributesGet', requestId: '2' }, '{"keys":["a"]}', ['get', 'dev-A', ['a']], 'attributes/get/response/2', { result: 1, attributes: { a: 1 } }],
    ['reply', { kind: 'commandReply', requestId: '5' }, '{"method":"m","params":{"r":1},"id":5}', ['reply', 'dev-A', { method: 'm', params: { r: 1 }, id: 5 }, '5'], 'command/reply/response/5', ok],
    ['reply id from topic', { kind: 'commandReply', requestId: '6' }, '{"method":"m"}', ['reply', 'dev-A', { method: 'm', params: {}, id: 6 }, '6'], 'command/reply/response/6', ok],
    ['event', { kind: 'event', requestId: '9' }, '{"method":"alarm","params":{"l":2}}', ['event', 'dev-A', '9', { method: 'alarm', params: { l: 2 } }], 'event/response/9', ok],
  ] as const)('%s', (_name, uplink, payload, call, topic, body) => {
    const { calls, replies, send } = setup();
    expect(send(uplink, payload)).toEqual({ action: 'accept' });
    expect(calls).toEqual([call]);
    expect(replies).toEqual([{ deviceId: 'dev-A', topic, body }]);
  });

  it.each([
    ['report array', { kind: 'report' }, '[1]', 'attributes/response'],
    ['report null value', { kind: 'report' }, '{"a":null}', 'attributes/response'],
    ['get keys not strings', { kind: 'attributesGet', requestId: '1' }, '{"keys":[1]}', 'attributes/get/response/1'],
    ['reply without method', { kind: 'commandReply', requestId: '1' }, '{"id":1}', 'command/reply/response/1'],
    ['reply bad id', { kind: 'commandReply', requestId: 'x' }, '{"method":"m"}', 'command/reply/response/x'],
    ['event without method', { kind: 'event', requestId: '1' }, '{"params":{}}', 'event/response/1'],
  ] as const)('answers errcode 400 to %s and keeps the connection', (_name, uplink, payload, topic) => {
    const { calls, replies, send } = setup();
    expect(send(uplink, payload)).toEqual({ action: 'accept' });
    expect(calls).toEqual([]);
    expect(replies).toEqual([{ deviceId: 'dev-A', topic, body: { result: 0, errcode: 400, message: expect.any(String) } }]);
  });

  it.each([
    ['report 3 deep', { kind: 'report' }, '{"a":{"b":[1]}}', 'attributes/response', 400, 'JSON nested deeper than 2 levels'],
    ['get keys nested', { kind: 'attributesGet', requestId: '1' }, '{"keys":[["a"]]}', 'attributes/get/response/1', 400, 'JSON nested deeper than 2 levels'],
    ['reply params deep', { kind: 'commandReply', requestId: '1' }, '{"method":"m","params":{"x":{}}}', 'command/reply/response/1', 400, 'JSON nested deeper than 2 levels'],
    ['event over 40 bytes', { kind: 'event', requestId: '1' }, `{"method":"${'m'.repeat(40)}"}`, 'event/response/1', 413, 'JSON larger than 40 bytes'],
    ['report 10,000 deep', { kind: 'report' }, '['.repeat(10_000) + ']'.repeat(10_000), 'attributes/response', 413, 'JSON larger than 40 bytes'],
  ] as const)('refuses %s beyond the JSON bounds with its errcode, keeping the connection', (_name, uplink, payload, topic, errcode, message) => {
    const { calls, replies, send } = setup({}, { maxDepth: 2, maxBytes: 40 });
    expect(send(uplink, payload)).toEqual({ action: 'accept' });
    expect(calls).toEqual([]);
    expect(replies).toEqual([{ deviceId: 'dev-A', topic, body: { result: 0, errcode, message } }]);
  });

  it('accepts a payload exactly at the bounds', () => {
    const { calls, send } = setup({}, { maxDepth: 2, maxBytes: 40 });
    const payload = '{"a":{"b":1},"c":"' + 'x'.repeat(40 - 20) + '"}';
    expect(Buffer.byteLength(payload)).toBe(40);
    expect(send({ kind: 'report' }, payload)).toEqual({ action: 'accept' });
    expect(calls).toHaveLength(1);
  });

  it.each([
    [{ kind: 'report' }],
    [{ kind: 'attributesGet', requestId: '1' }],
    [{ kind: 'commandReply', requestId: '1' }],
    [{ kind: 'event', requestId: '1' }],
  ] as const)('asks to disconnect on non-JSON for %j', (uplink) => {
    const { calls, replies, send } = setup();
    expect(send(uplink, '{not json')).toEqual({ action: 'disconnect', reason: 'non-JSON payload on a JSON topic' });
    expect(calls).toEqual([]);
    expect(replies).toEqual([]);
  });

  it('passes stream data through raw, with no answer', () => {
    const { calls, replies, send } = setup();
    const raw = Buffer.from([0xff, 0x00]);
    expect(send({ kind: 'streamData', identifier: 's' }, raw)).toEqual({ action: 'accept' });
    expect(calls).toEqual([['stream', 'dev-A', 's', raw]]);
    expect(replies).toEqual([]);
  });

  it('answers errcode 500 when the state returns values that cannot be JSON', () => {
    const { replies, send } = setup({ onAttributesGet: () => ({ big: 1n }) });
    expect(send({ kind: 'attributesGet', requestId: '1' }, '{}')).toEqual({ action: 'accept' });
    expect(replies[0].body).toEqual({ result: 0, errcode: 500, message: 'internal error' });
  });

  it('answers errcode 500 when the state throws, and survives a throwing stream handler', () => {
    const { replies, send } = setup({
      onReport: () => { throw new Error('boom'); },
      onStreamData: () => { throw new Error('boom'); },
    });
    expect(send({ kind: 'report' }, '{"a":1}')).toEqual({ action: 'accept' });
    expect(replies[0].body).toEqual({ result: 0, errcode: 500, message: 'internal error' });
    expect(send({ kind: 'streamData', identifier: 's' }, 'x')).toEqual({ action: 'accept' });
  });
});
