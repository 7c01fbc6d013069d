// gateway.cloud.identity's own report and command bounds: defaults, durations and limits.
import { describe, expect, it } from 'vitest';
import { DEFAULT_SELF_IDENTITY } from '../../../src/core/config/self-identity.js';
import { validateGateway } from '../../../src/core/config/schema.js';

const NAMED = { accessToken: 'fieldgate-token' };

describe('gateway.cloud.identity report and command bounds', () => {
  it('defaults to the documented values', () => {
    const result = validateGateway({ cloud: { identity: NAMED } }, {});
    expect(result.issues).toEqual([]);
    expect(result.gateway?.cloud.identity).toMatchObject(DEFAULT_SELF_IDENTITY);
    expect(DEFAULT_SELF_IDENTITY).toEqual({
      reportIntervalMs: 60_000, minReportGapMs: 5000,
      commands: { readMaxRegisters: 125, readMaxBits: 2000, readsPerMinute: 30, logLevelMaxMs: 3_600_000, maxPending: 8 },
      site: { checksPerMinute: 12, confirmMaxS: 3600, historyKept: 20 },
    });
  });

  it('takes durations', () => {
    const identity = { ...NAMED, reportIntervalMs: '5m', minReportGapMs: '10s', commands: { logLevelMaxMs: '2h', readsPerMinute: 5 } };
    const result = validateGateway({ cloud: { identity } }, {});
    expect(result.issues).toEqual([]);
    expect(result.gateway?.cloud.identity).toMatchObject({ reportIntervalMs: 300_000, minReportGapMs: 10_000, commands: { logLevelMaxMs: 7_200_000, readsPerMinute: 5, readMaxRegisters: 125 } });
  });

  // Table: [key, value, expected issue]
  const bad: Array<[string, Record<string, unknown>, string]> = [
    ['reportIntervalMs below 5 s', { reportIntervalMs: 1000 }, 'gateway.cloud.identity.reportIntervalMs: must be a number 5000..86400000 (got 1000)'],
    ['a bad duration', { minReportGapMs: 'soon' }, 'gateway.cloud.identity.minReportGapMs: must be a duration in ms or like "500ms", "2s", "10m", "1h" (got "soon")'],
    ['registers beyond Modbus', { commands: { readMaxRegisters: 126 } }, 'gateway.cloud.identity.commands.readMaxRegisters: must be a number 1..125 (got 126)'],
    ['bits beyond Modbus', { commands: { readMaxBits: 5000 } }, 'gateway.cloud.identity.commands.readMaxBits: must be a number 1..2000 (got 5000)'],
    ['no reads at all', { commands: { readsPerMinute: 0 } }, 'gateway.cloud.identity.commands.readsPerMinute: must be a number 1..6000'],
    ['a level for days', { commands: { logLevelMaxMs: '2d' } }, 'gateway.cloud.identity.commands.logLevelMaxMs: must be a duration in ms or like "500ms", "2s", "10m", "1h" (got "2d")'],
    ['a string count', { commands: { maxPending: 'many' } }, 'gateway.cloud.identity.commands.maxPending: must be a number (got "many")'],
    ['an unknown command key', { commands: { shell: true } }, 'gateway.cloud.identity.commands.shell: unknown key'],
    ['a window beyond a day', { site: { confirmMaxS: 100_000 } }, 'gateway.cloud.identity.site.confirmMaxS: must be a number 5..86400 (got 100000)'],
    ['a history of one', { site: { historyKept: 1 } }, 'gateway.cloud.identity.site.historyKept: must be a number 2..1000 (got 1)'],
  ];
  it.each(bad)('%s', (_what, extra, issue) => {
    const result = validateGateway({ cloud: { identity: { ...NAMED, ...extra } } }, {});
    expect(result.issues.map((i) => `${i.path}: ${i.message}`)).toEqual([issue]);
  });
});
