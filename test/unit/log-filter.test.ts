// `fieldgate logs` keeps the lines asked for, and never hides a line that is not the daemon's JSON.
import { describe, expect, it } from 'vitest';
import { levelNumber, parseLogLine, wanted, type LogFilter } from '../../src/core/log-filter.js';

const entry = (fields: Record<string, unknown>) => JSON.stringify({ level: 30, msg: 'x', ...fields });

describe('parseLogLine', () => {
  it.each([
    ['a daemon entry', entry({ device: 'meter-1' }), 'entry'],
    ['systemd\'s own line', 'Started fieldgate.service - fieldgate edge gateway.', 'text'],
    ['a JSON array', '[1,2,3]', 'text'],
    ['JSON null', 'null', 'text'],
    ['a truncated entry', '{"level":30,"msg":"cut', 'text'],
    ['an empty line', '', 'text'],
    ['a crash trace', '    at Object.<anonymous> (/usr/lib/fieldgate/app/bin/fieldgate.js:1:1)', 'text'],
  ])('%s is %s', (_what, line, kind) => {
    expect(parseLogLine(line).kind).toBe(kind);
  });
});

describe('wanted', () => {
  const cases: Array<[string, string, LogFilter, boolean]> = [
    ['no filter keeps an entry', entry({}), {}, true],
    ['device filter keeps its device', entry({ device: 'meter-1' }), { device: 'meter-1' }, true],
    ['device filter drops another device', entry({ device: 'meter-2' }), { device: 'meter-1' }, false],
    ['device filter drops an entry without a device', entry({ bus: 'rs485' }), { device: 'meter-1' }, false],
    ['device filter is exact, not a prefix', entry({ device: 'meter-10' }), { device: 'meter-1' }, false],
    ['device filter does not match a number field by its text', entry({ device: 1 }), { device: '1' }, false],
    ['level filter keeps the level itself', entry({ level: 40 }), { minLevel: 40 }, true],
    ['level filter keeps a higher level', entry({ level: 60 }), { minLevel: 40 }, true],
    ['level filter drops a lower level', entry({ level: 30 }), { minLevel: 40 }, false],
    ['level filter drops an entry whose level is text', entry({ level: 'error' }), { minLevel: 40 }, false],
    ['both filters must hold', entry({ level: 50, device: 'meter-2' }), { minLevel: 40, device: 'meter-1' }, false],
    ['text lines pass every filter', 'Main process exited, code=exited, status=78/CONFIG', { minLevel: 60, device: 'meter-1' }, true],
  ];
  it.each(cases)('%s', (_what, line, filter, expected) => {
    expect(wanted(parseLogLine(line), filter)).toBe(expected);
  });
});

describe('levelNumber', () => {
  it.each([['trace', 10], ['debug', 20], ['info', 30], ['warn', 40], ['error', 50], ['fatal', 60], ['silent', undefined], ['INFO', undefined], ['warning', undefined], ['', undefined]])(
    '%s is %s', (name, number) => {
      expect(levelNumber(name)).toBe(number);
    });
});
