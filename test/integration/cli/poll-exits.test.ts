// `fieldgate poll --once` against the simulator: a point whose scale factor is not implemented is
// absent (exit 0, nothing on stderr), not an error; a SunSpec profile at addresses the unit refuses
// gives one row and one hint to run `scan --sunspec`; every non-zero exit says why on stderr; and
// `--help` lists the exit codes. `scan` likewise never exits non-zero in silence.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProfiles } from '../../../src/ops/profile-library.js';
import { silentLogger } from '../../../src/ops/log.js';
import { placeProfiles, profileUnit, startSimulation, type Simulation } from '../../../packages/simulator/src/index.js';
import { runCli } from '../../helpers/run-cli.js';

let sim: Simulation;
let dir: string;
const library = loadProfiles([]).library;
const INVERTER = ['sunspec-common', 'sunspec-inverter-3ph'];

beforeAll(async () => {
  const placed = placeProfiles(INVERTER, library);
  expect(placed.problems).toEqual([]);
  // Unit 3 holds "not implemented" (0x8000) in W_SF, the scale factor of W; unit 4 is an ordinary meter.
  const inverter = profileUnit(3, placed.placements);
  const wsf = inverter.held.find((h) => h.point.id === 'W_SF')!.point;
  inverter.spec.values.push({ table: 'holding', address: wsf.address, words: [0x8000] });
  const meter = profileUnit(4, placeProfiles(['eastron-sdm120'], library).placements);
  // The meter has 100 holding registers: from 100 on it answers "Illegal data address".
  meter.spec.sizes = { holding: 100 };
  meter.spec.values = meter.spec.values.filter((v) => v.table !== 'holding' || v.address < 100);
  sim = await startSimulation({ map: { units: [inverter.spec, meter.spec] }, logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 } });
  dir = mkdtempSync(join(tmpdir(), 'fieldgate-poll-exits-'));
});

afterAll(async () => {
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function site(name: string, unitId: number, profile: string, timeoutMs = 1000): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, `buses:\n  - { name: b, kind: tcp, host: 127.0.0.1, port: ${sim.tcp!.port}, timeoutMs: ${timeoutMs} }\ndevices:\n  - { name: ${name}, bus: b, unitId: ${unitId}, profile: ${profile} }\n`);
  return file;
}

describe('fieldgate poll --once', () => {
  it('shows a point whose scale factor is not implemented as absent, exits 0 with nothing on stderr', async () => {
    const poll = await runCli(['poll', site('inv', 3, `[${INVERTER.join(', ')}]`), '--once']);
    expect(poll.err).toBe('');
    expect(poll.code).toBe(0);
    expect(poll.out).toMatch(/^inv +W_SF +holding:\d+ +int16 +absent \(not implemented\)$/m);
    expect(poll.out).toMatch(/^inv +W +holding:\d+ +int16 +absent \(not implemented: scale factor "W_SF" not implemented\)$/m);
    expect(poll.out).not.toContain('ERROR');
    // Other points keep their scaled values.
    expect(poll.out).toMatch(/^inv +A +holding:\d+ +uint16 +\d+(\.\d+)?$/m);
    const json = await runCli(['poll', site('inv', 3, `[${INVERTER.join(', ')}]`), '--once', '--json']);
    const sample = (JSON.parse(json.out) as Record<string, { values: Record<string, unknown>; errors: unknown[]; absent?: Record<string, string> }>).inv;
    expect(sample.errors).toEqual([]);
    expect(sample.values.W).toBeUndefined();
    expect(sample.absent).toEqual({ W: 'scale factor "W_SF" not implemented' });
  });

  it('a SunSpec profile at addresses the unit refuses: one row, one hint to run scan --sunspec, exit 69', async () => {
    const poll = await runCli(['poll', site('wrong', 4, `[${INVERTER.join(', ')}]`), '--once']);
    expect(poll.code).toBe(69);
    const rows = poll.out.trim().split('\n').filter((line) => line.startsWith('wrong '));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(/^wrong +\(all \d+ points\) +holding:40004 +ERROR Illegal data address$/);
    const lines = poll.err.trim().split('\n');
    expect(lines).toEqual([
      `fieldgate poll: wrong: every address from holding:40004 was refused (Illegal data address): its SunSpec models are elsewhere; \`fieldgate scan --sunspec --bus 127.0.0.1:${sim.tcp!.port} --units 4\` finds them`,
      expect.stringMatching(/^fieldgate poll: \d+ point\(s\) of 1 device\(s\) could not be read \(see the table\)$/) as unknown as string,
    ]);
  });

  it('a unit that does not answer: exit 69 and one plain line on stderr', async () => {
    const poll = await runCli(['poll', site('gone', 9, 'eastron-sdm120', 200), '--once']);
    expect(poll.code).toBe(69);
    expect(poll.out).toMatch(/^gone +voltage +input:0 +float32 +ERROR /m);
    expect(poll.err).toBe('fieldgate poll: 22 point(s) of 1 device(s) could not be read (see the table)\n');
  });

  it('--help lists the exit codes', async () => {
    const help = await runCli(['poll', '--help']);
    expect(help.code).toBe(0);
    for (const code of ['0 ', '64 ', '69 ', '78 ']) expect(help.out).toMatch(new RegExp(`^ {2}${code} `, 'm'));
  });
});

describe('fieldgate scan: a non-zero exit says why on stderr', () => {
  it('--sunspec on units without the marker', async () => {
    const scan = await runCli(['scan', '--sunspec', '--bus', `127.0.0.1:${sim.tcp!.port}`, '--units', '4', '--timeout', '500']);
    expect(scan.code).toBe(69);
    expect(scan.err).toBe('fieldgate scan: no SunSpec marker on any of the 1 unit(s) scanned\n');
  });

  it('no unit answering', async () => {
    const scan = await runCli(['scan', '--bus', `127.0.0.1:${sim.tcp!.port}`, '--units', '7-8', '--timeout', '200']);
    expect(scan.code).toBe(69);
    expect(scan.err.trim().split('\n').at(-1)).toBe('fieldgate scan: no unit answered (2 unit id(s) tried)');
  });
});
