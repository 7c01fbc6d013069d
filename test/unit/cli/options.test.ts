import { describe, expect, it } from 'vitest';
import { UsageError, busFromOptions } from '../../../src/cli/bus-options.js';
import { pointFromOptions } from '../../../src/cli/point-options.js';
import { parseBaudList, parseUnitList } from '../../../src/cli/scan.js';
import { formatStatus, formatTable } from '../../../src/cli/status.js';
import { asEpoch } from '../../../src/core/time.js';

describe('busFromOptions', () => {
  it.each([
    [{ bus: '127.0.0.1:1502' }, { kind: 'tcp', host: '127.0.0.1', port: 1502, timeoutMs: 1000 }],
    [{ bus: 'plc.local:502', timeout: '250' }, { kind: 'tcp', host: 'plc.local', port: 502, timeoutMs: 250 }],
    [{ bus: '[::1]:502' }, { kind: 'tcp', host: '::1', port: 502 }],
    [{ bus: '10.0.0.9:4001', 'rtu-over-tcp': true }, { kind: 'rtu-over-tcp', host: '10.0.0.9', port: 4001 }],
    [{ bus: '/dev/ttyUSB0' }, { kind: 'rtu', path: '/dev/ttyUSB0', baudRate: 9600, parity: 'even', dataBits: 8, stopBits: 1, interFrameDelayMs: 4.011, echo: false }],
    [{ bus: '/dev/ttyUSB0', baud: '115200', parity: 'none', 'stop-bits': '2' }, { kind: 'rtu', baudRate: 115200, parity: 'none', stopBits: 2, interFrameDelayMs: 1.75, echo: false }],
  ])('%o -> %o', (options, expected) => {
    expect(busFromOptions(options)).toMatchObject(expected);
  });

  it.each([
    [{}, '--bus is required (a serial path like /dev/ttyUSB0, or HOST:PORT)'],
    [{ bus: '/dev/ttyS0', baud: 'fast' }, '--baud: "fast" is not a whole number from 50 to 4000000'],
    [{ bus: '/dev/ttyS0', parity: 'mark' }, '--parity: "mark" must be none, even or odd'],
    [{ bus: '/dev/ttyS0', 'data-bits': '9' }, '--data-bits: "9" is not a whole number from 7 to 8'],
    [{ bus: 'host:70000' }, '--bus port: "70000" is not a whole number from 1 to 65535'],
  ])('%o is refused: %s', (options, message) => {
    expect(() => busFromOptions(options)).toThrow(new UsageError(message));
  });
});

describe('pointFromOptions', () => {
  it.each([
    [{ unit: '1', address: '0' }, { unit: 1, table: 'holding', address: 0, count: 1 }],
    [{ unit: '3', address: '10', count: '8' }, { unit: 3, count: 8 }],
    [{ unit: '1', address: '0', type: 'float32' }, { count: 2, point: { type: 'float32', wordOrder: 'big', byteOrder: 'big', scale: 1 } }],
    [{ unit: '1', address: '0', type: 'float64', 'word-order': 'little' }, { count: 4, point: { wordOrder: 'little' } }],
    [{ unit: '1', address: '0', type: 'string', count: '5' }, { count: 5, point: { length: 5 } }],
    [{ unit: '1', address: '7', table: 'coil', type: 'bool' }, { table: 'coil', count: 1, point: { writable: true } }],
    [{ unit: '1', address: '7', table: 'input', type: 'int16', scale: '0.1' }, { point: { writable: false, scale: 0.1 } }],
  ])('%o -> %o', (options, expected) => {
    expect(pointFromOptions(options)).toMatchObject(expected);
  });

  it.each([
    [{ address: '0' }, '--unit is required'],
    [{ unit: '1', address: '0', type: 'f23' }, '--type: "f23" must be one of bool, bit, int16, uint16, int32, uint32, int64, uint64, float32, float64, string'],
    [{ unit: '1', address: '0', table: 'holding', count: '126' }, '--count: "126" is not a whole number from 1 to 125'],
    [{ unit: '1', address: '0', type: 'int16', scale: 'x' }, '--scale: "x" is not a number'],
  ])('%o is refused: %s', (options, message) => {
    expect(() => pointFromOptions(options)).toThrow(new UsageError(message));
  });
});

describe('scan lists', () => {
  it.each([
    ['1-3,7', [1, 2, 3, 7]],
    ['5', [5]],
    ['3,1-2,2', [1, 2, 3]],
  ])('units %s', (text, expected) => expect(parseUnitList(text)).toEqual(expected));

  it.each(['0-300', '5-1', 'a', ''])('units %s refused', (text) => expect(() => parseUnitList(text)).toThrow(UsageError));

  it('bauds', () => {
    expect(parseBaudList(undefined, 19200)).toEqual([19200]);
    expect(parseBaudList('common', 9600)).toContain(115200);
    expect(parseBaudList('9600,38400', 9600)).toEqual([9600, 38400]);
    expect(() => parseBaudList('9600,x', 9600)).toThrow('--bauds: "x" is not a baud rate');
  });
});

describe('status formatting', () => {
  it('aligns columns', () => {
    expect(formatTable(['A', 'LONG'], [['xx', 1], ['y', 22]])).toBe('A   LONG\nxx  1\ny   22');
  });

  it('shows buses, devices, links, outbox and rate queue', () => {
    const text = formatStatus({
      version: '0.1.0', startedAt: '2026-11-22T00:00:00.000Z', uptimeS: 61,
      buses: [{ name: 'line1', kind: 'rtu', up: false, transactions: 10, timeouts: 2, exceptions: 0, queueDepth: 1, utilisation: 0.5 }],
      devices: [{ name: 'meter', bus: 'line1', online: false, points: 4, lastPollAgeMs: null, skippedCycles: 0 }],
      links: [{ device: 'meter', state: 'down', reconnects: 3, publishes: 9 }],
      outbox: { depth: 2, bytes: 100, maxBytes: 1000, dropped: 0 },
      rateQueue: { pending: 0, rateLimited: 1, waits: 1, rejected: 0 },
    });
    expect(text).toContain('line1  rtu   DOWN');
    expect(text).toContain('meter   line1  OFFLINE  4       0        never');
    expect(text).not.toContain('FAILING POINT');
    expect(text).not.toContain('LEARNED');
    expect(text).toContain('outbox: 2 reports, 100 of 1000 bytes, 0 dropped');
    expect(text).toContain('cloud API queue: 0 pending, 1 rate-limited, 0 rejected');
  });

  it('says which bus has a line whose echo does not match its setting', () => {
    const hint = 'the line echoes requests: set echo: true on this bus';
    const text = formatStatus({
      version: '0.1.0', startedAt: '2026-11-22T00:00:00.000Z', uptimeS: 61, devices: [], links: [], rateQueue: null, outbox: null,
      buses: [
        { name: 'line1', kind: 'rtu', up: true, transactions: 10, timeouts: 0, exceptions: 0, queueDepth: 0, utilisation: 0.1, echoProblem: hint },
        { name: 'line2', kind: 'rtu', up: true, transactions: 10, timeouts: 0, exceptions: 0, queueDepth: 0, utilisation: 0.1 },
      ],
    });
    expect(text).toContain(`bus line1: ${hint}`);
    expect(text).not.toContain('bus line2:');
  });

  it('says when the outbox storage fails, and the drops per device', () => {
    const text = formatStatus({
      version: '0.1.0', startedAt: '2026-11-22T00:00:00.000Z', uptimeS: 61, buses: [], devices: [], links: [], rateQueue: null,
      outbox: {
        depth: 40, bytes: 4000, maxBytes: 10_000, dropped: 7, droppedByDevice: { fast: 6, slow: 1 },
        storage: { state: 'failing', cause: 'SQLITE_FULL: database or disk is full', failingForMs: 65_000, failedWrites: 60, crashWindowHolds: false },
      },
    });
    expect(text).toContain('dropped by device: fast 6, slow 1');
    expect(text).toMatch(/outbox storage FAILING for .+: SQLITE_FULL: database or disk is full; reports in memory only, no crash window holds/);
    const healthy = formatStatus({
      version: '0.1.0', startedAt: '2026-11-22T00:00:00.000Z', uptimeS: 61, buses: [], devices: [], links: [], rateQueue: null,
      outbox: { depth: 0, bytes: 0, maxBytes: 10_000, dropped: 0, droppedByDevice: {}, storage: { state: 'ok', failedWrites: 0, crashWindowHolds: true } },
    });
    expect(healthy).not.toMatch(/storage FAILING|dropped by device/);
  });

  it('lists failing points, learned read limits and an overrun', () => {
    const text = formatStatus({
      version: '0.1.0', startedAt: '2026-11-22T00:00:00.000Z', uptimeS: 61, buses: [], links: [], outbox: null, rateQueue: null,
      devices: [{
        name: 'meter', bus: 'line1', online: true, points: 4, lastPollAgeMs: 500, skippedCycles: 7, overrunning: true, pointFailures: 1,
        failingPoints: [{ point: 'hole', table: 'holding', address: 20, error: 'ModbusExceptionError', exceptionCode: 2, message: 'unit 1 answered with Modbus exception 2 (Illegal data address)', since: asEpoch(0) }],
        learned: [
          { table: 'holding', kind: 'split', address: 20, reason: 'exception 2 (Illegal data address)' },
          { table: 'holding', kind: 'isolated', address: 20, point: 'hole', reason: 'exception 2 (Illegal data address)' },
        ],
      }],
    });
    expect(text).toContain('meter   line1  online  4       1        0.5s       7 (overrunning)');
    expect(text).toContain('meter   hole           holding 20  unit 1 answered with Modbus exception 2 (Illegal data address)');
    expect(text).toContain('meter   holding  no read across 20           exception 2 (Illegal data address)');
    expect(text).toContain('meter   holding  point hole (20) read alone  exception 2 (Illegal data address)');
  });
});

describe('formatStatus: the site file running', () => {
  const status = (lastError: string | null) => formatStatus({
    version: '0.1.0', startedAt: '2026-11-22T00:00:00.000Z', uptimeS: 61, buses: [], devices: [], links: [], outbox: null, rateQueue: null,
    config: { generation: 4, sha256: 'ab12cd34ef56aa77', loadedAt: '2026-11-22T00:01:00.000Z', lastError, reloads: { applied: 3, unchanged: 1, refused: lastError ? 1 : 0, failed: 0 } },
  });

  it('shows generation, digest, load time and reload counts', () => {
    expect(status(null)).toContain('site file: generation 4, sha256 ab12cd34ef56, loaded 2026-11-22T00:01:00.000Z; reloads: 3 applied, 1 unchanged, 0 refused, 0 failed');
    expect(status(null)).not.toContain('REFUSED');
  });

  it('says when the last reload was refused, and why', () => {
    expect(status('1 problem(s): gateway.stateDir: cannot change while fieldgate runs')).toContain('LAST RELOAD REFUSED: 1 problem(s): gateway.stateDir: cannot change while fieldgate runs');
  });
});
