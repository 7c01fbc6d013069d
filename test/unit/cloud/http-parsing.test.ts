import { describe, expect, it } from 'vitest';
import { unwrapProjectResult } from '../../../src/cloud/http/project-api.js';
import { unwrapDeviceResult } from '../../../src/cloud/http/device-api.js';
import { CloudApiError, CloudHttpError, NetworkError, RateLimitedError, isRetryable } from '../../../src/cloud/http/errors.js';
import { parseRateInfo, parseRetryAfter } from '../../../src/cloud/http/http-client.js';

const NOW = Date.parse('2025-01-01T00:00:00Z');

describe('parseRetryAfter', () => {
  it.each<[string | null, number | undefined]>([
    ['5', 5000], ['0', 0], ['1.5', 1500], ['-3', 0], [null, undefined], ['', undefined], ['soon', undefined],
    ['Wed, 01 Jan 2025 00:00:10 GMT', 10_000], ['Tue, 31 Dec 2024 23:59:00 GMT', 0],
  ])('%j -> %j ms', (value, expected) => {
    expect(parseRetryAfter(value, NOW)).toBe(expected);
  });
});

describe('parseRateInfo', () => {
  it.each<[Record<string, string>, object]>([
    [{}, {}],
    [{ 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '3', 'x-ratelimit-reset': '1735689600' }, { limit: 100, remaining: 3, resetInMs: 60_000 }],
    [{ 'x-ratelimit-reset': '1735689600123' }, { resetInMs: 60_123 }],
    [{ 'x-ratelimit-remaining': 'lots' }, {}],
    // Hostile or skewed: a reset already past (the queue then paces by its own interval), one a day away (waited at most an hour, rate-queue.test.ts).
    [{ 'x-ratelimit-reset': '1735689000' }, { resetInMs: -540_000 }],
    [{ 'x-ratelimit-reset': '1735776000' }, { resetInMs: 86_460_000 }],
    [{ 'x-ratelimit-reset': 'soon' }, {}],
  ])('%j -> %j', (headers, expected) => {
    // Read at 2025-01-01T00:00:00Z minus one minute, on the wall clock.
    expect(parseRateInfo(new Headers(headers), 1_735_689_540_000)).toEqual(expected);
  });
});

describe('result unwrapping', () => {
  it.each<[unknown, unknown]>([
    [{ result: true, info: { a: 1 } }, { a: 1 }],
    [{ result: true }, undefined],
  ])('interface A %j -> info', (body, info) => {
    expect(unwrapProjectResult(body, 'op')).toEqual(info);
  });

  it.each<[unknown, new (...args: never[]) => Error, RegExp]>([
    [{ result: false, errcode: 7, message: 'nope' }, CloudApiError, /op refused by the cloud \(errcode 7\): nope/],
    [{ result: false }, CloudApiError, /no message/],
    [{ info: {} }, CloudHttpError, /no result field/],
    [null, CloudHttpError, /no result field/],
    ['text', CloudHttpError, /no result field/],
  ])('interface A %j -> error', (body, type, message) => {
    expect(() => unwrapProjectResult(body, 'op')).toThrow(type);
    expect(() => unwrapProjectResult(body, 'op')).toThrow(message);
  });

  it('interface B uses numeric results', () => {
    expect(unwrapDeviceResult({ result: 1, ts: 5 }, 'op')).toEqual({ result: 1, ts: 5 });
    expect(() => unwrapDeviceResult({ result: 0, errcode: 410, message: 'Waiting for command sync reply timeout' }, 'op'))
      .toThrow('op refused by the cloud (errcode 410): Waiting for command sync reply timeout');
    expect(() => unwrapDeviceResult([1], 'op')).toThrow(CloudHttpError);
  });
});

describe('retry policy', () => {
  it.each<[Error, boolean]>([
    [new CloudHttpError(500, 'op'), true],
    [new CloudHttpError(503, 'op'), true],
    [new NetworkError('op', 'ECONNRESET'), true],
    [new CloudHttpError(404, 'op'), false],
    [new CloudApiError(1, 'x', 'op'), false],
    [new RateLimitedError(1000, 'op'), false],
    [new Error('x'), false],
  ])('%s retryable=%s', (err, expected) => {
    expect(isRetryable(err)).toBe(expected);
  });
  // backoffDelay's table is in test/unit/backoff.test.ts (one backoff for bus and cloud).
});
