// `fieldgate scan --identify` against the simulator serving each profile's identification registers:
// the right model is proposed, another model's unit is told apart, a unit with another map matches
// nothing, and a silent unit is reported as such.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProfiles } from '../../../src/ops/profile-library.js';
import { silentLogger } from '../../../src/ops/log.js';
import { placeProfiles, profileUnit, startSimulation, type Simulation } from '../../../packages/simulator/src/index.js';
import { runCli } from '../../helpers/run-cli.js';
import { writeIdentifiedProfiles } from './identified-profiles.js';

let sim: Simulation;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fieldgate-scan-identify-'));
  writeIdentifiedProfiles(dir);
  const library = loadProfiles([dir]).library;
  const unit = (id: number, name: string) => profileUnit(id, placeProfiles([name], library).placements).spec;
  // 1: model PM1, 2: model PM2 (same map, another code), 4: a meter without the register (an SDM630,
  // whose protocol V1.8 documents no meter code); 3 is
  // absent; 8: a SunSpec inverter (its models' ID registers identify them).
  const inverter = profileUnit(8, placeProfiles(['sunspec-inverter-3ph', 'sunspec-mppt'], library).placements).spec;
  // 5: an SDM120 (meter code 0x0020 at holding FC02), 6: an EM24-DIN (code 71 at input 000Bh), 7: the
  // EM24-DIN's map with an EM24_E1's code there (1650, EM24_E1 protocol 2.4.1): not an EM24-DIN, an E1.
  const em24 = unit(7, 'carlogavazzi-em24');
  const e1Code = { ...em24, values: [...em24.values, { table: 'input' as const, address: 0x000b, words: [1650] }] };
  sim = await startSimulation({ map: { units: [unit(1, 'acme-pm1'), unit(2, 'acme-pm2'), unit(4, 'eastron-sdm630'), unit(5, 'eastron-sdm120'), unit(6, 'carlogavazzi-em24'), e1Code, inverter] }, logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 } });
});

afterAll(async () => {
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('fieldgate scan --identify', () => {
  it('proposes the profile each unit identifies as', async () => {
    const scan = await runCli(['scan', '--identify', '--bus', `127.0.0.1:${sim.tcp!.port}`, '--units', '1-8', '--profile-dir', dir, '--timeout', '300']);
    expect(scan.code).toBe(0);
    // Every distinct register of the profiles with identification (shipped ones too), each read once;
    // the lines start with the matches and what the ACME and SunSpec ID registers held.
    const lines = scan.out.split('\n');
    expect(lines).toHaveLength(9);
    expect(lines[0]).toMatch(/^unit 1: acme-pm1 \(read: holding 256 = 100, input 300 = "PM", .*holding 40002 = 0, holding 40070 = 0, holding 40122 = 0/);
    expect(lines[1]).toMatch(/^unit 2: acme-pm2 \(read: holding 256 = 200, input 300 = "PM", /);
    expect(lines[2]).toBe('unit 3: no answer');
    // The meter's map has no such registers; the simulator (like many devices) reads them as 0.
    expect(lines[3]).toMatch(/^unit 4: no profile's identification matches \(read: holding 256 = 0, input 300 = "", /);
    expect(lines[4]).toMatch(/^unit 5: eastron-sdm120 \(read: .*holding 64514 = 32[,)]/);
    expect(lines[5]).toMatch(/^unit 6: carlogavazzi-em24 \(read: .*input 11 = 71[,)]/);
    expect(lines[6]).toMatch(/^unit 7: carlogavazzi-em24-e1 \(read: .*input 11 = 1650[,)]/);
    expect(lines[7]).toMatch(/^unit 8: sunspec-common or sunspec-inverter-3ph or sunspec-mppt \(read: .*holding 40002 = 1, holding 40070 = 103, holding 40122 = 160/);
    expect(lines[8]).toBe('');
  });

  it('exits 69 with one stderr line when no unit matches, and 64 for --sunspec with --identify', async () => {
    const none = await runCli(['scan', '--identify', '--bus', `127.0.0.1:${sim.tcp!.port}`, '--units', '3-4', '--profile-dir', dir, '--timeout', '300']);
    expect(none.code).toBe(69);
    expect(none.err).toMatch(/^fieldgate scan: no unit matches the identification of any of the \d+ profile\(s\) that declare one \(2 unit\(s\) scanned\)\n$/);
    const both = await runCli(['scan', '--identify', '--sunspec', '--bus', `127.0.0.1:${sim.tcp!.port}`, '--units', '1']);
    expect(both.code).toBe(64);
  });

  it('exits 78 when a site profile is broken', async () => {
    const broken = mkdtempSync(join(tmpdir(), 'fieldgate-scan-identify-broken-'));
    try {
      writeFileSync(join(broken, 'acme-bad.yaml'), 'name: acme-bad\n');
      const scan = await runCli(['scan', '--identify', '--bus', `127.0.0.1:${sim.tcp!.port}`, '--units', '1', '--profile-dir', broken]);
      expect(scan.code).toBe(78);
      expect(scan.err).toContain('profile acme-bad.vendor: required');
    } finally {
      rmSync(broken, { recursive: true, force: true });
    }
  });
});
