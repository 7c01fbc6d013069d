// gateway.web: every bound of the page has its default, set values are kept, and the connection
// limit follows maxEventClients unless written out.
import { describe, expect, it } from 'vitest';
import { validateGateway } from '../../../src/core/config/schema.js';

describe('gateway.web bounds', () => {
  it('a port alone gives the page every default bound', () => {
    const { gateway, issues } = validateGateway({ web: { port: 8080 } }, {});
    expect(issues).toEqual([]);
    expect(gateway?.web).toEqual({
      port: 8080, address: '127.0.0.1', allowWrites: false, allowReload: false, maxEventClients: 20, historySamples: 180,
      sessionIdleMs: 3_600_000, maxBodyBytes: 1_048_576, loginFailuresPerMinute: 5, loginFailuresPerMinuteTotal: 30,
      statusPeriodMs: 2000, maxBufferedBytes: 262_144, maxSessions: 256, lineFramesKept: 400, maxScanUnits: 32, maxConnections: 4 * 20 + 256,
    });
  });

  it('keeps set values; the connection limit follows maxEventClients while 0', () => {
    const web = { port: 8080, maxEventClients: 100, statusPeriodMs: '5s', maxBufferedBytes: 65_536, maxSessions: 16, lineFramesKept: 1000, maxScanUnits: 247, loginFailuresPerMinuteTotal: 100 };
    expect(validateGateway({ web }, {}).gateway?.web).toMatchObject({ ...web, statusPeriodMs: 5000, maxConnections: 4 * 100 + 256 });
    expect(validateGateway({ web: { port: 8080, maxConnections: 64 } }, {}).gateway?.web?.maxConnections).toBe(64);
  });

  it('checks a set connection limit against the streams only when both passed their own checks', () => {
    expect(validateGateway({ web: { port: 8080, maxEventClients: 10, maxConnections: 26 } }, {}).issues).toEqual([]);
    expect(validateGateway({ web: { port: 8080, maxEventClients: 10, maxConnections: 25 } }, {}).issues.map((i) => i.path)).toEqual(['gateway.web.maxConnections']);
    // One problem per key: an out-of-range value is not also compared.
    const [only, ...more] = validateGateway({ web: { port: 8080, loginFailuresPerMinuteTotal: 0 } }, {}).issues;
    expect(more).toEqual([]);
    expect(only).toMatchObject({ path: 'gateway.web.loginFailuresPerMinuteTotal', message: expect.stringContaining('must be an integer 1..100000') });
  });
});
