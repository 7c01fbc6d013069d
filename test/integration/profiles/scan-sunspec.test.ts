// `fieldgate scan --sunspec` against the simulator serving a SunSpec inverter: the marker is found,
// every model is printed with id and length, and the printed device block validates and polls.
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

beforeAll(async () => {
  const placed = placeProfiles(['sunspec-inverter-3ph', 'sunspec-mppt'], library);
  expect(placed.problems).toEqual([]);
  // Unit 3 is the inverter; unit 4 answers but has no SunSpec map (an ordinary meter).
  const meter = profileUnit(4, placeProfiles(['eastron-sdm120'], library).placements);
  sim = await startSimulation({ map: { units: [profileUnit(3, placed.placements).spec, meter.spec] }, logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 } });
  dir = mkdtempSync(join(tmpdir(), 'fieldgate-scan-sunspec-'));
});

afterAll(async () => {
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('fieldgate scan --sunspec', () => {
  it('finds the model chain and prints a device block that validates and polls', async () => {
    const port = sim.tcp!.port;
    const scan = await runCli(['scan', '--sunspec', '--bus', `127.0.0.1:${port}`, '--units', '3-5', '--bus-name', 'inverters', '--timeout', '500']);
    expect(scan.code).toBe(0);
    expect(scan.out).toContain('unit 3: SunS at 40000, 3 model(s)');
    expect(scan.out).toContain('  model 1 at 40002, length 66: sunspec-common');
    expect(scan.out).toContain('  model 103 at 40070, length 50: sunspec-inverter-3ph');
    expect(scan.out).toContain('  model 160 at 40122, length 28: sunspec-mppt');
    expect(scan.out).toMatch(/unit 4: no SunS marker \(40000: .*; 50000: .*; 0: no SunS marker\)/);
    expect(scan.out).toMatch(/unit 5: no answer at 40000/);
    const block = /site-file device block:\n([\s\S]*?)(?=\nunit |\n?$)/.exec(scan.out)?.[1];
    expect(block).toBe('  - name: unit-3\n    bus: inverters\n    unitId: 3\n    profile: [sunspec-common, sunspec-inverter-3ph, { name: sunspec-mppt, prefix: m160_ }]');

    const site = join(dir, 'site.yaml');
    writeFileSync(site, `buses:\n  - { name: inverters, kind: tcp, host: 127.0.0.1, port: ${port} }\ndevices:\n${block}\n`);
    const validate = await runCli(['validate', site]);
    expect(validate.err).toBe('');
    expect(validate.out).toMatch(/^unit-3: /m);
    const poll = await runCli(['poll', site, '--once', '--json']);
    expect(poll.err).toBe('');
    expect(poll.code).toBe(0);
    const values = (JSON.parse(poll.out) as Record<string, { values: Record<string, unknown>; errors: unknown[] }>)['unit-3'];
    expect(values.errors).toEqual([]);
    expect(values.values.Mn).toBe('sim-Mn');
    expect(typeof values.values.W).toBe('number');
    // The MPPT model's scale factors share names with the inverter's: prefixed, each scales its own points.
    expect(typeof values.values.m160_M1_DCA).toBe('number');
    expect(values.values.m160_DCA_SF).toBe(-1);
    const table = await runCli(['poll', site, '--once']);
    expect(table.code).toBe(0);
    expect(table.out).toMatch(/unit-3 +EvtVnd4 +holding:40120 +uint32 +absent \(not implemented\)/);
  });
});
