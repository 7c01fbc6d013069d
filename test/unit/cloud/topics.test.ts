import { describe, expect, it } from 'vitest';
import {
  attributesGetRequest, attributesReport, commandReply, dataSetTopic, dataTopic, isValidTopicLevel,
  parseInbound, subscriptionTopics, type Inbound,
} from '../../../src/cloud/mqtt/topics.js';

const streams = ['rs485', 'tcp1'];
const parse = (topic: string, payload: string | Buffer, maxPayloadBytes?: number): Inbound =>
  parseInbound(topic, typeof payload === 'string' ? Buffer.from(payload) : payload, { streams, maxPayloadBytes });

describe('topic names', () => {
  it('builds the device channel topics', () => {
    expect(dataTopic('rs485')).toBe('data/rs485');
    expect(dataSetTopic('rs485')).toBe('data/rs485/set');
    expect(subscriptionTopics(['a', 'b'])).toEqual([
      'attributes/push', 'command/send/+', 'attributes/get/response/+', 'data/a/set', 'data/b/set',
    ]);
  });

  it.each([
    ['rs485', true], ['', false], ['a/b', false], ['a+', false], ['#', false], ['x'.repeat(129), false],
  ])('topic level %j valid=%s', (level, ok) => {
    expect(isValidTopicLevel(level)).toBe(ok);
  });
});

describe('parseInbound: valid messages', () => {
  it.each<[string, string, Inbound]>([
    ['attributes/push', '{"sp":21.5,"on":true}', { kind: 'attributes-push', attributes: { sp: 21.5, on: true } }],
    ['attributes/push', '{}', { kind: 'attributes-push', attributes: {} }],
    ['command/send/7', '{"method":"reset","params":{"a":1},"id":7}', { kind: 'command', method: 'reset', params: { a: 1 }, id: 7, topicId: '7' }],
    ['command/send/1000', '{"method":"read"}', { kind: 'command', method: 'read', params: {}, id: 1000, topicId: '1000' }],
    ['command/send/5', '{"method":"read","id":"12"}', { kind: 'command', method: 'read', params: {}, id: 12, topicId: '5' }],
    ['attributes/get/response/3', '{"result":1,"attributes":{"a":1}}', { kind: 'attributes-get-response', topicId: '3', ok: true, attributes: { a: 1 } }],
    ['attributes/get/response/3', '{"result":0,"errcode":404,"message":"no"}', { kind: 'attributes-get-response', topicId: '3', ok: false, attributes: {}, errcode: 404, message: 'no' }],
  ])('%s %s', (topic, payload, expected) => {
    expect(parse(topic, payload)).toEqual(expected);
  });

  it('passes data/<id>/set bytes through untouched', () => {
    const bytes = Buffer.from([0x01, 0x03, 0x00, 0xff]);
    expect(parse('data/rs485/set', bytes)).toEqual({ kind: 'data-set', identifier: 'rs485', bytes });
  });
});

describe('parseInbound: invalid messages', () => {
  it.each<[string, string, RegExp]>([
    ['attributes/push', 'not json', /not valid JSON/],
    ['attributes/push', '[1,2]', /must be a JSON object, got array/],
    ['attributes/push', 'null', /got null/],
    ['attributes/push', '42', /got number/],
    ['attributes/push', '"x"', /got string/],
    ['attributes/get/response/1', '{"result":1,"attributes":[1]}', /attributes must be a JSON object/],
    ['attributes/get/response/', '{}', /no request id/],
    ['data/unknown/set', 'x', /unknown data stream "unknown"/],
    ['something/else', '{}', /unexpected topic/],
    ['attributes/response', '{"result":1}', /unexpected topic/],
  ])('%s %j', (topic, payload, reason) => {
    const result = parse(topic, payload);
    expect(result.kind).toBe('invalid');
    if (result.kind === 'invalid') expect(result.reason).toMatch(reason);
  });

  it.each<[string, string, RegExp, { id: number; topicId: string; method: string } | undefined]>([
    ['command/send/9', '{bad', /not valid JSON/, { id: 9, topicId: '9', method: '' }],
    ['command/send/9', '{"method":3,"id":9}', /method must be a non-empty string/, { id: 9, topicId: '9', method: '' }],
    ['command/send/9', '{"method":"","id":9}', /method must be a non-empty string/, { id: 9, topicId: '9', method: '' }],
    ['command/send/9', '{"method":"m","params":[1],"id":9}', /params must be a JSON object/, { id: 9, topicId: '9', method: 'm' }],
    ['command/send/9', '{"method":"m","params":"x","id":9}', /params must be a JSON object/, { id: 9, topicId: '9', method: 'm' }],
    ['command/send/9', '{"method":"m","id":-1}', /id must be a non-negative integer/, { id: 9, topicId: '9', method: 'm' }],
    ['command/send/9', '{"method":"m","id":1.5}', /id must be a non-negative integer/, { id: 9, topicId: '9', method: 'm' }],
    ['command/send/abc', '{"method":"m"}', /id must be a non-negative integer/, undefined],
    ['command/send/', '{"method":"m","id":1}', /no request id/, undefined],
  ])('command %s %s keeps what is needed to answer', (topic, payload, reason, command) => {
    const result = parse(topic, payload);
    expect(result).toMatchObject({ kind: 'invalid' });
    if (result.kind !== 'invalid') return;
    expect(result.reason).toMatch(reason);
    expect(result.command).toEqual(command);
  });

  it('rejects a payload over the cap without parsing it, still answerable for commands', () => {
    const huge = Buffer.alloc(2000, 0x20);
    const push = parse('attributes/push', huge, 1000);
    expect(push).toMatchObject({ kind: 'invalid', reason: 'payload of 2000 bytes exceeds the 1000 byte limit' });
    const command = parse('command/send/44', huge, 1000);
    expect(command).toMatchObject({ kind: 'invalid', command: { id: 44, topicId: '44', method: '' } });
    expect(parse('data/rs485/set', huge, 1000).kind).toBe('invalid');
  });

  // The method leading an oversize command's body is named in its reply (a cloud matching sync replies by method gets it); nothing past the first bytes is read.
  it.each([
    ['a leading method', `{"method":"site_apply","params":{"text":"${'x'.repeat(2000)}"},"id":7}`, 'site_apply'],
    ['spaces around it', ` { "method" : "site_check", "params": "${'x'.repeat(2000)}"}`, 'site_check'],
    ['method after params', `{"params":{"text":"${'x'.repeat(2000)}"},"method":"site_apply"}`, ''],
    ['a method with a quote', `{"method":"a\\"b","params":"${'x'.repeat(2000)}"}`, ''],
  ])('an oversize command with %s', (_what, body, method) => {
    expect(parse('command/send/7', Buffer.from(body), 1000)).toMatchObject({ kind: 'invalid', command: { id: 7, method } });
  });

  it('accepts a Set of streams too', () => {
    const result = parseInbound('data/s1/set', Buffer.from('hi'), { streams: new Set(['s1']) });
    expect(result.kind).toBe('data-set');
  });

  it('survives a thousand malformed payloads', () => {
    const topics = ['attributes/push', 'command/send/1', 'attributes/get/response/1', 'data/rs485/set', 'x'];
    let invalid = 0;
    for (let i = 0; i < 1000; i += 1) {
      const bytes = Buffer.from(Array.from({ length: i % 50 }, (_, j) => (i * 31 + j * 7) % 256));
      const result = parse(topics[i % topics.length], bytes);
      if (result.kind === 'invalid') invalid += 1;
    }
    expect(invalid).toBeGreaterThan(500);
  });
});

describe('parseInbound: key cap', () => {
  const keys = (n: number, prefix = 'k') => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i]));
  const parseCapped = (topic: string, body: unknown, maxKeys: number): Inbound =>
    parseInbound(topic, Buffer.from(JSON.stringify(body)), { streams, maxKeys });

  it.each([
    ['push at the cap', 'attributes/push', keys(10), 'attributes-push'],
    ['push above the cap', 'attributes/push', keys(11), 'invalid'],
    ['write at the cap', 'command/send/7', { method: 'write', params: keys(10), id: 7 }, 'command'],
    ['write above the cap', 'command/send/7', { method: 'write', params: keys(11), id: 7 }, 'invalid'],
    ['read list at the cap', 'command/send/7', { method: 'read', params: { keys: Array(10).fill('t') }, id: 7 }, 'command'],
    ['read list of one key repeated above the cap', 'command/send/7', { method: 'read', params: { keys: Array(11).fill('t') }, id: 7 }, 'invalid'],
  ])('%s', (_name, topic, body, kind) => {
    expect(parseCapped(topic, body, 10).kind).toBe(kind);
  });

  it('a refused command still carries its id and method, so it is answered', () => {
    const result = parseCapped('command/send/9', { method: 'read', params: { keys: Array(2000).fill('t') }, id: 9 }, 1000);
    expect(result).toEqual({
      kind: 'invalid', topic: 'command/send/9', reason: 'message has 2000 keys, more than the limit of 1000',
      command: { id: 9, topicId: '9', method: 'read' },
    });
  });

  it('the default cap refuses a push of 24,000 keys in one verdict', () => {
    // 24,000 keys are larger than the default byte cap: raise it so the key cap is what answers.
    const result = parseInbound('attributes/push', Buffer.from(JSON.stringify(keys(24_000, 'ghost_'))), { streams, maxPayloadBytes: 1 << 20 });
    expect(result).toMatchObject({ kind: 'invalid', reason: 'message has 24000 keys, more than the limit of 1000' });
  });
});

describe('payload builders', () => {
  it('builds a command reply with the same method and id in topic and payload', () => {
    const ok = commandReply({ id: 12, method: 'read' }, { params: { t: 1 } });
    expect(ok.topic).toBe('command/reply/12');
    expect(JSON.parse(ok.payload.toString())).toEqual({ method: 'read', params: { t: 1 }, id: 12 });
    const err = commandReply({ id: 3, method: 'x' }, { error: { code: 'unknown_method', message: 'no such method' } });
    expect(JSON.parse(err.payload.toString())).toEqual({
      method: 'x', params: { error: { code: 'unknown_method', message: 'no such method' } }, id: 3,
    });
  });

  it('builds a flat attributes report without non-finite numbers', () => {
    const report = attributesReport({ a: 1, b: 'x', c: true, d: Number.NaN, e: Infinity, f: { g: 1 } });
    expect(JSON.parse(report.toString())).toEqual({ a: 1, b: 'x', c: true, f: { g: 1 } });
  });

  it('builds an attributes get request', () => {
    expect(attributesGetRequest(4).topic).toBe('attributes/get/4');
    expect(attributesGetRequest(4).payload.toString()).toBe('{}');
    expect(attributesGetRequest(4, ['a', 'b']).payload.toString()).toBe('{"keys":["a","b"]}');
  });
});
