// Pure parts of the gateway sub-device protocol: payload shapes, duplicate addresses, downlink shapes.
import { describe, expect, it } from 'vitest';
import {
  duplicateTopLevelKey, gatewayCommandPayload, gatewayPushPayload, parseGatewayMessage, type GatewayUplinkKind,
} from '../../../packages/emulator/src/channel/gateway-topics.js';
import { BadRequest } from '../../../packages/emulator/src/channel/payload-shapes.js';

function parse(kind: GatewayUplinkKind, text: string) {
  return parseGatewayMessage(kind, JSON.parse(text), text);
}

describe('parseGatewayMessage accepts', () => {
  it.each([
    ['report', '{"1":{"v":1.5,"on":true},"2":{"label":"x","obj":{"a":[1]}}}',
      { kind: 'report', entries: [['1', { v: 1.5, on: true }], ['2', { label: 'x', obj: { a: [1] } }]] }],
    ['report', '{}', { kind: 'report', entries: [] }],
    ['report', '{"1":{}}', { kind: 'report', entries: [['1', {}]] }],
    ['connect', '{"device":"7"}', { kind: 'connect', addr: '7' }],
    ['disconnect', '{"device":"7","extra":1}', { kind: 'disconnect', addr: '7' }],
    ['event', '{"device":"7","event":{"method":"alarm","params":{"x":1}}}', { kind: 'event', addr: '7', event: { method: 'alarm', params: { x: 1 } } }],
    ['event', '{"device":"7","event":{"method":"alarm"}}', { kind: 'event', addr: '7', event: { method: 'alarm', params: {} } }],
    ['attributesGet', '{"device":"7"}', { kind: 'attributesGet', addr: '7', keys: undefined }],
    ['attributesGet', '{"device":"7","keys":["a","b"]}', { kind: 'attributesGet', addr: '7', keys: ['a', 'b'] }],
    ['commandReply', '{"device":"7","command":{"id":3,"method":"set","params":{"ok":true}}}',
      { kind: 'commandReply', addr: '7', reply: { id: 3, method: 'set', params: { ok: true } } }],
  ] as const)('%s %s', (kind, text, expected) => {
    expect(parse(kind, text)).toEqual(expected);
  });
});

describe('parseGatewayMessage refuses', () => {
  it.each([
    ['report', '[1]', 'a gateway report must be a JSON object'],
    ['report', '"x"', 'a gateway report must be a JSON object'],
    ['report', '{"1":5}', 'the attributes of sub-device "1" must be a JSON object'],
    ['report', '{"1":[1,2]}', 'the attributes of sub-device "1" must be a JSON object'],
    ['report', '{"1":{"v":null}}', 'attribute "v" must be a number, string, boolean or object'],
    ['report', '{"":{"v":1}}', 'a sub-device address must not be empty'],
    ['report', '{"1":{"v":1},"2":{},"1":{"v":2}}', 'sub-device address "1" appears twice in one batch'],
    ['connect', '{}', 'device must be a non-empty string (the sub-device address)'],
    ['connect', '{"device":7}', 'device must be a non-empty string (the sub-device address)'],
    ['disconnect', '{"device":""}', 'device must be a non-empty string (the sub-device address)'],
    ['connect', 'null', 'a gateway message must be a JSON object'],
    ['event', '{"device":"7"}', 'event must be a JSON object'],
    ['event', '{"device":"7","event":{"params":{}}}', 'method must be a non-empty string'],
    ['attributesGet', '{"device":"7","keys":"a"}', 'keys must be an array of strings'],
    ['commandReply', '{"device":"7"}', 'a command reply must be a JSON object'],
    ['commandReply', '{"device":"7","command":{"method":"m"}}', 'id must be an integer'],
    ['commandReply', '{"device":"7","command":{"method":"m","id":"3"}}', 'id must be an integer'],
    ['commandReply', '{"device":"7","command":{"method":"m","id":1.5}}', 'id must be an integer'],
  ] as const)('%s %s', (kind, text, message) => {
    expect(() => parse(kind, text)).toThrow(new BadRequest(message));
  });
});

describe('duplicateTopLevelKey', () => {
  it.each([
    ['{"a":1,"b":2}', undefined],
    ['{"a":{"x":1,"x":2}}', undefined], // nested duplicates are the attributes' business
    ['{"a":1,"a":2}', 'a'],
    ['{ "a" : 1 , "b" : {"a":1}, "a" : [ "a" ] }', 'a'],
    ['{"\\u0031":1,"1":2}', '1'], // the same address escaped differently
    ['{"a\\"b":1,"a\\"b":2}', 'a"b'],
    ['{"x":"\\\\","y":"a,\\"b\\":c","b":1}', undefined], // commas and quotes inside strings
    ['{"k":["a","b"],"a":1}', undefined], // strings in arrays are not keys
    ['{}', undefined],
  ])('%s -> %s', (text, expected) => {
    expect(duplicateTopLevelKey(text)).toBe(expected);
  });
});

describe('downlink payloads', () => {
  it('builds both documented push shapes', () => {
    expect(gatewayPushPayload('keyed', '4', { relay: true })).toEqual({ 4: { relay: true } });
    expect(gatewayPushPayload('device', '4', { relay: true })).toEqual({ device: '4', attributes: { relay: true } });
  });

  it('wraps a command for its sub-device address', () => {
    expect(gatewayCommandPayload('4', { method: 'reset', params: { hard: true }, id: 9 })).toEqual({
      device: '4', command: { id: 9, method: 'reset', params: { hard: true } },
    });
  });
});
