import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseEndpoint, simulateUntil } from '../../../packages/simulator/src/cli.js';
import { waitFor } from '../../helpers/wait.js';
import { Capture, mbpoll } from './sim-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'fieldgate-sim-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function mapFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function start(args: string[]) {
  const stdout = new Capture();
  const stderr = new Capture();
  const stop = new AbortController();
  const done = simulateUntil(args, { stdout, stderr, env: {} }, stop.signal);
  return { stdout, stderr, stop, done };
}

const GOOD = mapFile('good.yaml', 'units: { 7: { name: boiler, holding: { 0: 77 } } }');

describe('fieldgate simulate', () => {
  it('serves TCP on the chosen port until stopped', async () => {
    const run = start([GOOD, '--tcp', '127.0.0.1:0', '--log-level', 'silent']);
    const line = await waitFor(() => /modbus tcp listening on 127\.0\.0\.1:(\d+)/.exec(run.stdout.text) ?? undefined, { what: 'listening line' });
    expect(run.stdout.text).toContain('simulating units 7 (boiler)');
    const result = await mbpoll(['-m', 'tcp', '-p', line[1], '-a', '7', '-0', '-r', '0', '-t', '4', '127.0.0.1']);
    expect(result.values.get(0)).toBe('77');
    run.stop.abort();
    expect(await run.done).toBe(0);
    expect(run.stdout.text).toContain('simulator stopped');
  });

  it('creates a pty pair with --pty and serves RTU on it', async () => {
    const run = start([GOOD, '--pty', '--baud', '19200', '--parity', 'none', '--log-level', 'silent']);
    const master = await waitFor(() => /connect the master to (\S+)/.exec(run.stdout.text) ?? undefined, { what: 'pty line' });
    expect(run.stdout.text).toMatch(/modbus rtu on \S+ at 19200 8N1/);
    const result = await mbpoll(['-m', 'rtu', '-b', '19200', '-P', 'none', '-a', '7', '-0', '-r', '0', '-t', '4', master[1]]);
    expect(result.values.get(0)).toBe('77');
    run.stop.abort();
    expect(await run.done).toBe(0);
  });

  it('exits 78 with every map problem and its path', async () => {
    const bad = mapFile('bad.yaml', 'units: { 1: { holding: [ { address: 0, value: 1.5 } ], coil: { 0: 9 } } }');
    const run = start([bad]);
    expect(await run.done).toBe(78);
    expect(run.stderr.text).toContain('units.1.holding[0].value');
    expect(run.stderr.text).toContain('units.1.coil.0');
  });

  it('exits 78 for a missing map file', async () => {
    const run = start([join(dir, 'nope.yaml')]);
    expect(await run.done).toBe(78);
    expect(run.stderr.text).toContain('cannot read the file');
  });

  it.each([
    [[], 'exactly one register map file'],
    [[GOOD, '--tcp', 'localhost:99999'], '--tcp: expected [HOST:]PORT'],
    [[GOOD, '--parity', 'mark'], 'parity must be none, even or odd'],
    [[GOOD, '--stop-bits', '3'], 'stop bits must be 1 or 2'],
    [[GOOD, '--rtu', '/dev/null', '--pty'], '--rtu and --pty exclude each other'],
    [[GOOD, '--log-level', 'loud'], '--log-level'],
    [[GOOD, '--frobnicate'], "Unknown option '--frobnicate'"],
    [[GOOD, '--profile', 'eastron-sdm120'], 'give a register map or --profile, not both'],
    [[GOOD, '--unit', '3'], '--unit goes with --profile'],
  ])('exits 64 for %j', async (args, message) => {
    const run = start(args);
    expect(await run.done).toBe(64);
    expect(run.stderr.text).toContain(message);
  });

  it('serves a SunSpec profile: mbpoll finds the SunS marker and the common model header', async () => {
    const run = start(['--profile', 'sunspec-inverter-3ph', '--unit', '9', '--tcp', '127.0.0.1:0', '--log-level', 'silent']);
    const line = await waitFor(() => /modbus tcp listening on 127\.0\.0\.1:(\d+)/.exec(run.stdout.text) ?? undefined, { what: 'listening line' });
    expect(run.stdout.text).toContain('simulating units 9 (sunspec-common + sunspec-inverter-3ph) from profile sunspec-inverter-3ph');
    expect(run.stdout.text).toContain('site-file device block:\n  - name: unit-9\n    bus: bus1\n    unitId: 9\n    profile: [sunspec-common, sunspec-inverter-3ph]');
    const result = await mbpoll(['-m', 'tcp', '-p', line[1], '-a', '9', '-0', '-r', '40000', '-c', '4', '-t', '4:hex', '127.0.0.1']);
    expect([0, 1, 2, 3].map((i) => result.values.get(40000 + i))).toEqual(['0x5375', '0x6E53', '0x0001', '0x0042']);
    run.stop.abort();
    expect(await run.done).toBe(0);
  });

  it.each([
    [['--profile', 'eastron-sdm360'], 'unknown profile "eastron-sdm360"'],
    [['--profile', 'eastron-sdm120', '--unit', '0'], '--unit must be 1..247'],
  ])('exits 78 for %j', async (args, message) => {
    const run = start([...args, '--tcp', '127.0.0.1:0', '--log-level', 'silent']);
    expect(await run.done).toBe(78);
    expect(run.stderr.text).toContain(message);
  });

  it('exits 69 when the port cannot be opened', async () => {
    const run = start([GOOD, '--rtu', join(dir, 'no-such-tty'), '--log-level', 'silent']);
    expect(await run.done).toBe(69);
    expect(run.stderr.text).toContain('cannot open serial port');
  });

  it.each([
    ['5020', { host: '127.0.0.1', port: 5020 }],
    ['0.0.0.0:502', { host: '0.0.0.0', port: 502 }],
    ['[::1]:0', { host: '::1', port: 0 }],
  ])('parses endpoint %s', (text, expected) => {
    expect(parseEndpoint(text, 'tcp')).toEqual(expected);
  });
});
