// `fieldgate profiles`: the list (name first), one profile's points as a table, and site profiles.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadProfiles, SHIPPED_PROFILE_DIR } from '../../../src/ops/profile-library.js';
import { runCli } from '../../helpers/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'fieldgate-profiles-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fieldgate profiles', () => {
  it('lists every profile, name first, then vendor, model and points', async () => {
    const { code, out } = await runCli(['profiles', '--profile-dir', join(dir, 'empty-but-listed')]);
    // A listed directory that does not exist is reported (exit 78) but the list is still printed.
    expect(code).toBe(78);
    const lines = out.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME +VENDOR +MODEL +POINTS +SOURCE +FROM$/);
    // SOURCE: whether the manufacturer's document itself was read (primary) or could not be (secondary).
    expect(lines.find((l) => l.startsWith('eastron-sdm630 '))).toMatch(/^eastron-sdm630 +Eastron +SDM630-Modbus \(V2, MID\) +87 +primary +shipped$/);
    expect(lines.find((l) => l.startsWith('carlogavazzi-em24 '))).toMatch(/^carlogavazzi-em24 +Carlo Gavazzi +EM24-DIN \(RS-485, Modbus RTU\) only; not the EM24 Ethernet \(E1\) +51 +primary +shipped$/);
    // One line per shipped profile: the SunSpec models among them, and every other profile too.
    const shipped = loadProfiles([]).library.names();
    expect(lines.filter((l) => l.startsWith('sunspec-'))).toHaveLength(shipped.filter((name) => name.startsWith('sunspec-')).length);
    expect(lines.slice(1).map((l) => l.split(/ +/)[0]).sort()).toEqual(shipped);
  });

  it('shows one profile: its source, then its points as a table', async () => {
    const { code, out } = await runCli(['profiles', 'show', 'sunspec-meter-wye']);
    expect(code).toBe(0);
    expect(out).toContain('source: SunSpec Information Model, model 203');
    expect(out).not.toContain('source quality');
    const secondary = await runCli(['profiles', 'show', 'janitza-b23']);
    expect(secondary.out).toContain('source quality: secondary');
    expect(out).toMatch(/^ID +TABLE +ADDRESS +TYPE +SCALE +UNIT +WRITABLE +NOTE$/m);
    expect(out).toMatch(/^TotWhImp +holding +40116 +uint32 +10\^TotWh_SF +Wh +no +absent when 0$/m);
    const sdm = await runCli(['profiles', 'show', 'eastron-sdm630']);
    expect(sdm.out).toMatch(/^demand_period +holding +2 +float32 +1 +min +yes 0\.\.60$/m);
  });

  it('marks a site profile that replaces a shipped one', async () => {
    writeFileSync(join(dir, 'eastron-sdm120.yaml'), readFileSync(join(SHIPPED_PROFILE_DIR, 'eastron-sdm120.yaml'), 'utf8'));
    const list = await runCli(['profiles', '--profile-dir', dir]);
    expect(list.code).toBe(0);
    expect(list.out).toMatch(/^eastron-sdm120 .* site$/m);
    const show = await runCli(['profiles', 'show', 'eastron-sdm120', '--profile-dir', dir]);
    expect(show.out).toContain('(a site profile replacing the shipped one)');
  });

  it('marks a site\'s own profile of a new name as the site\'s, not shipped', async () => {
    const own = join(dir, 'own');
    mkdirSync(own);
    writeFileSync(join(own, 'my-meter.yaml'), readFileSync(join(SHIPPED_PROFILE_DIR, 'eastron-sdm630.yaml'), 'utf8').replace(/^name: eastron-sdm630$/m, 'name: my-meter'));
    const list = await runCli(['profiles', '--profile-dir', own]);
    expect(list.code).toBe(0);
    expect(list.out).toMatch(/^my-meter .* site$/m);
    expect(list.out).toMatch(/^eastron-sdm630 .* shipped$/m);
  });

  it.each([
    [['profiles', 'show'], 64, 'show needs exactly one profile name'],
    [['profiles', 'show', 'eastron-sdm360'], 64, 'unknown profile "eastron-sdm360"'],
    [['profiles', 'list'], 64, 'unknown sub-command "list"'],
  ])('%j exits %i', async (args, code, message) => {
    const result = await runCli(args);
    expect(result.code).toBe(code);
    expect(result.err).toContain(message);
  });
});
