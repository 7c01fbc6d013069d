// Pure parts of the emulator's input handling: JSON bounds, query parameters in their looser
// forms, MQTT topic matching for delivery QoS, device codes. Hostile values in every table.
import { describe, expect, it } from 'vitest';
import { maxMatchingQos, topicMatches } from '../../../packages/emulator/src/channel/delivery-qos.js';
import { ApiError, type FieldError } from '../../../packages/emulator/src/http/errors.js';
import { MAX_TIME_MS, readFlag, readList, readPage, readTimeMs } from '../../../packages/emulator/src/http/validate.js';
import { checkJsonLimits, jsonDepth, parseBoundedJson, type JsonLimits } from '../../../packages/emulator/src/json-limits.js';
import { deviceCodeFor, DEVICE_CODE_LENGTH } from '../../../packages/emulator/src/state/device-code.js';

const LIMITS: JsonLimits = { maxDepth: 3, maxBytes: 64 };
const parse = (text: string) => parseBoundedJson(text, Buffer.byteLength(text), LIMITS);

describe('jsonDepth', () => {
  it.each([
    ['1', 0], ['"[[[["', 0], ['{}', 1], ['[[]]', 2], ['{"a":[{"b":1}]}', 3],
    ['{"a":"]]]]{{{{"}', 1], ['{"a":"\\\\"}', 1], ['{"a\\"[":[1]}', 2], ['[[1],[2],[[3]]]', 3],
  ])('%s is %i deep', (text, depth) => expect(jsonDepth(text)).toBe(depth));

  it('stops counting early past the bound (a million levels)', () => {
    expect(jsonDepth('['.repeat(1_000_000) + ']'.repeat(1_000_000), 10)).toBe(11);
  });
});

describe('parseBoundedJson', () => {
  it.each([
    ['{"a":{"b":[1]}}', { ok: true, value: { a: { b: [1] } } }],
    ['{"a":{"b":[[1]]}}', { ok: false, problem: 'depth', message: 'JSON nested deeper than 3 levels' }],
    ['\uFEFF{"bom":true}', { ok: true, value: { bom: true } }],
    ['{"a":', { ok: false, problem: 'syntax' }],
    ['NaN', { ok: false, problem: 'syntax' }],
    ['{"a":Infinity}', { ok: false, problem: 'syntax' }],
    ['', { ok: false, problem: 'syntax' }],
    [`"${'x'.repeat(63)}"`, { ok: false, problem: 'size', message: 'JSON larger than 64 bytes' }],
    [`"${'x'.repeat(62)}"`, { ok: true, value: 'x'.repeat(62) }],
    ['{"dup":1,"dup":2}', { ok: true, value: { dup: 2 } }],
  ])('%s', (text, want) => expect(parse(text)).toMatchObject(want));

  it('counts bytes, not characters', () => {
    expect(parse(`"${'é'.repeat(40)}"`)).toMatchObject({ ok: false, problem: 'size' });
  });
});

describe('checkJsonLimits', () => {
  it.each([
    [{ maxDepth: 64, maxBytes: 1 << 20 }, undefined],
    [{ maxDepth: 0, maxBytes: 100 }, /depth/],
    [{ maxDepth: 1001, maxBytes: 100 }, /depth/],
    [{ maxDepth: 2.5, maxBytes: 100 }, /depth/],
    [{ maxDepth: Number.NaN, maxBytes: 100 }, /depth/],
    [{ maxDepth: 5, maxBytes: 1 }, /size/],
    [{ maxDepth: 5, maxBytes: Infinity }, /size/],
  ])('%o', (limits, want) => {
    const problem = checkJsonLimits(limits);
    if (want === undefined) expect(problem).toBeUndefined();
    else expect(problem).toMatch(want);
  });
});

describe('readTimeMs: Unix ms, decimal part truncated', () => {
  const read = (query: string) => {
    const errors: FieldError[] = [];
    const value = readTimeMs(new URLSearchParams(query), 't', errors);
    return errors.length > 0 ? 'error' : value;
  };
  it.each([
    ['t=1792866425165', 1792866425165],
    ['t=1792866425165.6912', 1792866425165],
    ['t=1792866425165.', 1792866425165],
    ['t=1792866425164.9999', 1792866425164],
    ['t=1792866425164.99999999999999999999', 1792866425164],
    ['t=%201792866425165%20', 1792866425165],
    ['t=0', 0],
    ['t=0.999', 0],
    [`t=${MAX_TIME_MS}`, MAX_TIME_MS],
    ['t=', undefined],
    ['', undefined],
    ['t=1&t=2', 1],
    ['t=-1', 'error'], ['t=-0.5', 'error'], ['t=NaN', 'error'], ['t=Infinity', 'error'], ['t=-Infinity', 'error'],
    ['t=1e12', 'error'], ['t=0x10', 'error'], ['t=.5', 'error'], ['t=1.2.3', 'error'], ['t=%2B5', 'error'],
    [`t=${MAX_TIME_MS + 1}`, 'error'], ['t=99999999999999999999999', 'error'], [`t=${'9'.repeat(400)}`, 'error'],
  ])('%s -> %s', (query, want) => expect(read(query)).toBe(want));
});

describe('readPage, readList, readFlag: query strings in the forms clients send', () => {
  it.each([
    ['page=2.0&page_records=20.00', { page: 2, pageRecords: 20 }],
    ['page=%202%20', { page: 2, pageRecords: 24 }],
    ['page=', { page: 1, pageRecords: 24 }],
    ['page=3&page=9', { page: 3, pageRecords: 24 }],
  ])('%s reads as %o', (query, want) => expect(readPage(new URLSearchParams(query), 100, 24)).toEqual(want));

  it.each(['page=0', 'page=-1', 'page=2.5', 'page=NaN', 'page=Infinity', 'page=1e2', 'page_records=101', 'page_records=0', `page=${'9'.repeat(400)}`])(
    '%s is refused', (query) => expect(() => readPage(new URLSearchParams(query), 100, 24)).toThrow(ApiError),
  );

  it.each([
    ['keys=a&keys=b', ['a', 'b']],
    ['keys=a,b&keys=b,c', ['a', 'b', 'c']],
    ['keys=&keys=a', ['a']],
    ['keys=a,a', ['a']],
  ])('%s lists %o', (query, want) => expect(readList(new URLSearchParams(query), 'keys')).toEqual(want));

  it.each([
    ['f=1', true], ['f=true', true], ['f=TRUE', true], ['f=%201', true],
    ['f=0', false], ['f=false', false], ['f=', false], ['', false], ['f=yes', false], ['f=2', false],
  ])('%s is %s', (query, want) => expect(readFlag(new URLSearchParams(query), 'f')).toBe(want));
});

describe('topic matching for delivery QoS', () => {
  it.each([
    ['#', 'a/b', true], ['a/#', 'a', true], ['a/#', 'a/b/c', true], ['a/+', 'a/b', true], ['a/+', 'a/b/c', false],
    ['+/+', 'a/b', true], ['a/b', 'a/b', true], ['a/b', 'a/b/c', false], ['a/b/c', 'a/b', false], ['+', '', true],
    ['#', '$dev/x/a', false], ['+/x/a', '$dev/x/a', false], ['$dev/x/#', '$dev/x/attributes/response', true],
    ['$dev/x/#', '$dev/y/attributes/response', false], ['$dev/x/attributes/+', '$dev/x/attributes/response', true],
  ])('%s ~ %s is %s', (filter, topic, want) => expect(topicMatches(filter, topic)).toBe(want));

  it('takes the maximum QoS of the matching subscriptions only', () => {
    const subs = { '$dev/x/#': { qos: 0 }, '$dev/x/attributes/response': { qos: 1 }, '$dev/x/command/+': { qos: 2 } };
    expect(maxMatchingQos(subs, '$dev/x/attributes/response')).toBe(1);
    expect(maxMatchingQos(subs, '$dev/x/attributes/push')).toBe(0);
    expect(maxMatchingQos(subs, '$dev/x/command/send')).toBe(2);
    expect(maxMatchingQos({}, '$dev/x/a')).toBe(0);
  });
});

describe('deviceCodeFor', () => {
  it('is stable, non-empty, of fixed length and unambiguous characters', () => {
    const code = deviceCodeFor('dev-meter-1', new Set());
    expect(code).toBe(deviceCodeFor('dev-meter-1', new Set()));
    expect(code).toMatch(new RegExp(`^[0-9A-HJKMNP-TV-Z]{${DEVICE_CODE_LENGTH}}$`));
  });

  it('differs between ids and steps around a taken code', () => {
    const codes = new Set<string>();
    for (let i = 0; i < 2000; i += 1) codes.add(deviceCodeFor(`dev-${i}`, codes));
    expect(codes.size).toBe(2000);
    const first = deviceCodeFor('dev-x', new Set());
    const second = deviceCodeFor('dev-x', new Set([first]));
    expect(second).not.toBe(first);
    expect(second).toHaveLength(DEVICE_CODE_LENGTH);
  });

  it.each(['', ' ', '\u0000', 'x'.repeat(10_000), 'dev/+#'])('codes the id %j too', (id) => {
    expect(deviceCodeFor(id, new Set())).toHaveLength(DEVICE_CODE_LENGTH);
  });
});
