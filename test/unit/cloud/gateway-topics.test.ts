// What a cloud may send on the gateway topics, hostile versions included: every message is
// classified (routed per sub-device, refusal, accepted or invalid), never thrown, and a command
// body is checked exactly as on a direct device's topic.
import { describe, expect, it } from 'vitest';
import { GATEWAY_TOPIC, parseGatewayInbound } from '../../../src/cloud/mqtt/gateway-topics.js';
import { parseInbound } from '../../../src/cloud/mqtt/topics.js';

const OPTIONS = { maxPayloadBytes: 4096, maxKeys: 3 };
const parse = (topic: string, body: unknown) => parseGatewayInbound(topic, Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)), OPTIONS);
const PUSH = GATEWAY_TOPIC.attributesPush;
const COMMAND = GATEWAY_TOPIC.commandSend;

describe('gateway/attributes/push', () => {
  it.each([
    { name: 'address-keyed shape, two devices', body: { 4: { speed: 1 }, 7: { speed: 2 } }, routed: [['4', 'attributes-push'], ['7', 'attributes-push']] },
    { name: 'device shape', body: { device: '4', attributes: { speed: 1 } }, routed: [['4', 'attributes-push']] },
    { name: 'a device whose attributes are not an object', body: { 4: [1, 2] }, routed: [['4', 'invalid']] },
    { name: 'too many keys for one device', body: { 4: { a: 1, b: 2, c: 3, d: 4 } }, routed: [['4', 'invalid']] },
    { name: 'device shape with attributes null', body: { device: '4', attributes: null }, routed: [['4', 'invalid']] },
  ])('$name', ({ body, routed }) => {
    const result = parse(PUSH, body);
    expect(result.kind).toBe('routed');
    if (result.kind !== 'routed') return;
    expect(result.messages.map((m) => [m.address, m.message.kind])).toEqual(routed);
  });

  it.each([
    { name: 'empty address (keyed)', body: { '': { speed: 1 } }, reason: /must not be empty/ },
    { name: 'empty address (device shape)', body: { device: '', attributes: {} }, reason: /non-empty/ },
    { name: 'not JSON', body: 'speed=1', reason: /JSON/ },
    { name: 'an array', body: '[1,2]', reason: /JSON object/ },
    { name: 'too big', body: { 4: { s: 'x'.repeat(5000) } }, reason: /exceeds the 4096 byte limit/ },
    { name: 'nested deeper than the JSON bound', body: `{"4":${'['.repeat(5000)}${']'.repeat(5000)}}`, reason: /./ },
  ])('invalid: $name', ({ body, reason }) => {
    const result = parse(PUSH, body);
    expect(result.kind).toBe('invalid');
    if (result.kind === 'invalid') expect(result.reason).toMatch(reason);
  });
});

describe('gateway/command/send', () => {
  const command = (inner: unknown) => ({ device: '4', command: inner });
  it.each([
    { name: 'valid', inner: { id: 7, method: 'read', params: { keys: ['a'] } }, kind: 'command', answerable: true },
    { name: 'no params', inner: { id: 7, method: 'status' }, kind: 'command', answerable: true },
    { name: 'id missing', inner: { method: 'read' }, kind: 'invalid', answerable: false },
    { name: 'negative id', inner: { id: -1, method: 'read' }, kind: 'invalid', answerable: false },
    { name: 'method empty', inner: { id: 7, method: '' }, kind: 'invalid', answerable: true },
    { name: 'params an array', inner: { id: 7, method: 'read', params: [1] }, kind: 'invalid', answerable: true },
    { name: 'too many keys', inner: { id: 7, method: 'read', params: { keys: ['a', 'b', 'c', 'd'] } }, kind: 'invalid', answerable: true },
    { name: 'command not an object', inner: 'read', kind: 'invalid', answerable: false },
  ])('$name', ({ inner, kind, answerable }) => {
    const result = parse(COMMAND, command(inner));
    expect(result.kind).toBe('routed');
    if (result.kind !== 'routed') return;
    const [routed] = result.messages;
    expect(routed.address).toBe('4');
    expect(routed.message.kind).toBe(kind);
    if (routed.message.kind === 'invalid') expect(routed.message.command !== undefined).toBe(answerable);
  });

  it.each([
    { id: 7, method: 'read', params: { keys: ['a'] } },
    { id: 7, method: '' },
    { id: 7, method: 'read', params: 'x' },
    { id: 7, method: 'read', params: { a: 1, b: 2, c: 3, d: 4 } },
  ])('checks the body %j as a direct device topic does', (inner) => {
    const gateway = parse(COMMAND, command(inner));
    const direct = parseInbound('command/send/7', Buffer.from(JSON.stringify(inner)), { streams: new Set(), maxPayloadBytes: 4096, maxKeys: 3 });
    expect(gateway.kind === 'routed' ? gateway.messages[0].message : gateway).toEqual(direct.kind === 'invalid' ? { ...direct, topic: COMMAND } : direct);
  });

  it.each([
    { name: 'no device', body: { command: { id: 1, method: 'read' } } },
    { name: 'device not a string', body: { device: 4, command: { id: 1, method: 'read' } } },
  ])('invalid without an address: $name', ({ body }) => {
    expect(parse(COMMAND, body).kind).toBe('invalid');
  });
});

describe('responses and other topics', () => {
  it('accepts a success answer', () => {
    expect(parse('gateway/attributes/response', { result: 1, ts: 1 })).toEqual({ kind: 'accepted', topic: 'gateway/attributes/response' });
  });

  it('bounds a refusal: every address named (matched against the sub-devices, up to 10,000), a reason of at most 200', () => {
    const devices = Array.from({ length: 10_050 }, (_, i) => `a/${i}`);
    const payload = Buffer.from(JSON.stringify({ result: 0, errcode: 404, message: 'm'.repeat(1000), devices }));
    const result = parseGatewayInbound('gateway/attributes/response', payload, { ...OPTIONS, maxPayloadBytes: 1_000_000 });
    expect(result.kind).toBe('refusal');
    if (result.kind !== 'refusal') return;
    expect(result.errcode).toBe(404);
    expect(result.addresses).toHaveLength(10_000);
    expect(result.addresses[9_999]).toBe('a/9999');
    expect(result.reason).toHaveLength(200);
  });

  it.each([
    ['the devices list', { devices: ['plant-0/15', 'plant-1/2'], device: 'plant-0/15' }, ['plant-0/15', 'plant-1/2']],
    ['the device alone', { device: 'plant-0/15' }, ['plant-0/15']],
    ['only the message', {}, ['plant-0/15', 'x"y']],
  ])('a refusal for unbound addresses names them by %s', (_name, extra, expected) => {
    const message = 'sub-device address not bound to this gateway: "plant-0/15", "x\\"y"';
    expect(parse('gateway/attributes/response', { result: 0, errcode: 404, message, ...extra })).toMatchObject({ kind: 'refusal', errcode: 404, addresses: expected });
  });

  it('refuses a topic it does not serve', () => {
    expect(parse('gateway/unknown', {})).toEqual({ kind: 'invalid', topic: 'gateway/unknown', reason: 'unexpected topic' });
  });
});
