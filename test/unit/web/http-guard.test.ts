import { describe, expect, it } from 'vitest';
import { foreignHostProblem } from '../../../src/ops/web/http-guard.js';

describe('foreignHostProblem: the Host names a page without a password answers to', () => {
  it.each([
    ['127.0.0.1:8080', undefined], ['127.0.0.1', undefined], ['localhost:8080', undefined], ['LocalHost', undefined],
    ['[::1]:8080', undefined], ['[::1]', undefined], ['plant.localhost:9000', undefined], ['localhost:', undefined],
    ['evil.example:8080', 'Host is not a loopback name'], ['localhost.evil.example', 'Host is not a loopback name'],
    ['127.0.0.2:8080', 'Host is not a loopback name'], ['192.168.1.20:8080', 'Host is not a loopback name'],
    ['[::ffff:127.0.0.1]:8080', 'Host is not a loopback name'], ['', 'no Host header'], [undefined, 'no Host header'],
  ])('%s -> %s', (host, problem) => {
    expect(foreignHostProblem(host)).toBe(problem);
  });
});
