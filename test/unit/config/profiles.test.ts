// `profile:` in the site file: expansion, overrides, additions, exclusions, SunSpec placement, and
// site profile directories overriding shipped profiles.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkConfig } from '../../../src/ops/site-file.js';
import { loadProfiles, SHIPPED_PROFILE_DIR } from '../../../src/ops/profile-library.js';
import type { ConfigIssue, PointConfig } from '../../../src/core/config/site-types.js';

const dir = mkdtempSync(join(tmpdir(), 'fieldgate-profile-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BUS = { name: 'line', kind: 'tcp', host: '127.0.0.1', port: 502 };
function check(device: Record<string, unknown>, gateway: Record<string, unknown> = { profileDirs: [] }) {
  return checkConfig({ gateway, buses: [BUS], devices: [{ name: 'm1', bus: 'line', unitId: 1, ...device }] }, {});
}
function pointsOf(device: Record<string, unknown>): Map<string, PointConfig> {
  const result = check(device);
  expect(result.issues).toEqual([]);
  return new Map(result.config!.site.devices[0].points.map((p) => [p.id, p]));
}
const messages = (issues: ConfigIssue[]) => issues.map((i) => `${i.path}: ${i.message}`);

describe('profile expansion', () => {
  it('gives every point of the profile and its device defaults', () => {
    const result = check({ profile: 'eastron-sdm630' });
    expect(result.issues).toEqual([]);
    const device = result.config!.site.devices[0];
    expect(device.points).toHaveLength(87);
    expect(device.pollIntervalMs).toBe(2000);
    expect(device.points.find((p) => p.id === 'voltage_l1')).toMatchObject({ table: 'input', address: 0, type: 'float32', unit: 'V' });
  });

  it('overrides a point by id, adds points and excludes points', () => {
    const points = pointsOf({
      profile: 'eastron-sdm630',
      exclude: ['thd_voltage_l1', 'thd_voltage_l2'],
      points: [{ id: 'power_total', report: { deadband: 50 } }, { id: 'demand_period', max: 30 }, { id: 'site_extra', table: 'holding', address: 100, type: 'uint16' }],
    });
    expect(points.has('thd_voltage_l1')).toBe(false);
    expect(points.get('power_total')).toMatchObject({ address: 52, type: 'float32', report: { deadband: 50 } });
    expect(points.get('demand_period')).toMatchObject({ table: 'holding', address: 2, writable: true, min: 0, max: 30 });
    expect(points.get('site_extra')).toMatchObject({ address: 100, type: 'uint16' });
    expect(points.size).toBe(87 - 2 + 1);
  });

  it('lets the site override device keys, one limit at a time', () => {
    const result = check({ profile: 'eastron-sdm72dm-v2', pollIntervalMs: 750, limits: { maxGap: 0 } });
    expect(result.issues).toEqual([]);
    const device = result.config!.site.devices[0];
    expect(device.pollIntervalMs).toBe(750);
    expect(device.limits).toMatchObject({ maxRegistersPerRead: 60, maxGap: 0 });
  });

  it('places SunSpec models where the device has them', () => {
    const defaults = pointsOf({ profile: ['sunspec-common', 'sunspec-inverter-3ph'] });
    expect(defaults.get('Mn')?.address).toBe(40004);
    expect(defaults.get('A')).toMatchObject({ address: 40072, scaleFactor: 'A_SF', notImplemented: 65535 });
    const moved = pointsOf({ profile: [{ name: 'sunspec-common', address: 2 }, { name: 'sunspec-inverter-3ph', address: 70 }] });
    expect(moved.get('Mn')?.address).toBe(4);
    expect(moved.get('A')?.address).toBe(72);
  });

  it('reports every misuse at once, with paths that name what the user wrote', () => {
    const result = checkConfig({
      gateway: { profileDirs: [] },
      buses: [BUS],
      devices: [
        { name: 'a', bus: 'line', unitId: 1, profile: 'eastron-sdm603' },
        { name: 'b', bus: 'line', unitId: 2, profile: 'eastron-sdm630', exclude: ['voltage_l4', 'power_total'], points: [{ id: 'power_total', scale: 0 }] },
        { name: 'c', bus: 'line', unitId: 3, profile: { name: 'eastron-sdm120', address: 100 } },
        { name: 'd', bus: 'line', unitId: 4, profile: 'sunspec-inverter-3ph', exclude: ['A_SF'] },
        { name: 'e', bus: 'line', unitId: 5, exclude: ['x'], points: [{ id: 'x', table: 'holding', address: 0 }] },
        { name: 'f', bus: 'line', unitId: 6, profile: 'eastron-sdm120', limits: { maxRegistersPerRead: 1 } },
      ],
    }, {});
    expect(messages(result.issues)).toEqual([
      'devices[0].profile: unknown profile "eastron-sdm603" (did you mean "eastron-sdm630"?); `fieldgate profiles` lists them',
      'devices[1].exclude[0]: unknown point "voltage_l4": no profile of this device has it (did you mean "voltage_l1"?)',
      'devices[1].points[0]: point "power_total" is both overridden here and excluded',
      'devices[1].points[0].scale: must not be 0',
      'devices[2].profile.address: only SunSpec profiles are placed by address ("eastron-sdm120" has fixed addresses)',
      'devices[3].profile(sunspec-inverter-3ph).A.scaleFactor: "A_SF" is not a point of this device (excluded, or misspelt?)',
      'devices[3].profile(sunspec-inverter-3ph).AphA.scaleFactor: "A_SF" is not a point of this device (excluded, or misspelt?)',
      'devices[3].profile(sunspec-inverter-3ph).AphB.scaleFactor: "A_SF" is not a point of this device (excluded, or misspelt?)',
      'devices[3].profile(sunspec-inverter-3ph).AphC.scaleFactor: "A_SF" is not a point of this device (excluded, or misspelt?)',
      'devices[4].exclude: only with a profile: list the points you want instead',
      ...['voltage', 'current', 'power_total', 'apparent_power_total', 'reactive_power_total', 'power_factor_total', 'frequency', 'import_energy', 'export_energy', 'import_reactive_energy', 'export_reactive_energy',
        'power_demand', 'power_demand_max', 'import_power_demand', 'import_power_demand_max', 'export_power_demand', 'export_power_demand_max', 'current_demand', 'current_demand_max', 'total_energy', 'total_reactive_energy']
        .map((id) => `devices[5].profile(eastron-sdm120).${id}.type: float32 of 2 registers does not fit limits.maxRegistersPerRead (1)`),
      'devices[5].profile(eastron-sdm120).serial_number.type: uint32 of 2 registers does not fit limits.maxRegistersPerRead (1)',
    ]);
  });
});

describe('profile directories', () => {
  const siteDir = join(dir, 'site-profiles');
  mkdirSync(siteDir);
  const shippedText = readFileSync(join(SHIPPED_PROFILE_DIR, 'eastron-sdm120.yaml'), 'utf8');

  it('a site profile of a shipped name replaces it and is reported as an override', () => {
    writeFileSync(join(siteDir, 'eastron-sdm120.yaml'), shippedText.replace('pollIntervalMs: 2000', 'pollIntervalMs: 3000'));
    const result = check({ profile: 'eastron-sdm120' }, { profileDirs: [siteDir] });
    expect(result.issues).toEqual([]);
    expect(result.config!.site.devices[0].pollIntervalMs).toBe(3000);
    expect(result.config!.profileOverrides).toEqual([{ name: 'eastron-sdm120', file: join(siteDir, 'eastron-sdm120.yaml'), shipped: join(SHIPPED_PROFILE_DIR, 'eastron-sdm120.yaml') }]);
  });

  it('reports broken site profiles and missing listed directories', () => {
    const broken = join(dir, 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, 'my-meter.yaml'), 'name: other\nvendor: X\nmodel: Y\npoints:\n  - { id: a, table: holding, address: 0 }\n  - { id: a, table: holding, address: 0, type: float32 }\n');
    writeFileSync(join(broken, 'junk.yaml'), 'points: [\n');
    const loaded = loadProfiles([broken, join(dir, 'missing')]);
    expect(messages(loaded.issues)).toEqual([
      expect.stringMatching(/junk\.yaml: not a readable profile/) as unknown as string,
      'profile my-meter.name: must match the file name "my-meter.yaml" (got "other")',
      'profile my-meter.source.title: required',
      'profile my-meter.source.version: required',
      'profile my-meter.source.table: required',
      'profile my-meter.points[1].id: duplicate id "a" (also points[0])',
      'profile my-meter.points[1].address: overlaps point "a" (holding 0)',
      `gateway.profileDirs[1]: directory ${JSON.stringify(join(dir, 'missing'))} not found`,
    ]);
  });

  it('checks source.quality: primary or secondary, and secondary material must say what it is', () => {
    const q = join(dir, 'quality');
    mkdirSync(q);
    const head = (name: string, extra: string) => `name: ${name}\nvendor: X\nmodel: Y\nsource:\n  title: T\n  version: V\n  table: P\n${extra}points:\n  - { id: a, table: holding, address: 0 }\n`;
    writeFileSync(join(q, 'good-one.yaml'), head('good-one', '  quality: secondary\n  notes: from a reseller\'s copy\n'));
    writeFileSync(join(q, 'plain-one.yaml'), head('plain-one', ''));
    writeFileSync(join(q, 'bad-one.yaml'), head('bad-one', '  quality: tertiary\n'));
    writeFileSync(join(q, 'bare-one.yaml'), head('bare-one', '  quality: secondary\n'));
    const loaded = loadProfiles([q]);
    expect(messages(loaded.issues)).toEqual([
      'profile bad-one.source.quality: must be one of primary, secondary (got "tertiary")',
      'profile bare-one.source.notes: required when quality is secondary: say where the addresses come from',
    ]);
    expect(loaded.library.get('good-one')!.source.quality).toBe('secondary');
    expect(loaded.library.get('plain-one')!.source.quality).toBe('primary');
  });

  it('refuses hostile profile files without reading them whole or expanding them', () => {
    const hostile = join(dir, 'hostile');
    mkdirSync(hostile);
    writeFileSync(join(hostile, 'huge.yaml'), `# ${'x'.repeat(2 << 20)}\n`);
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}]`)];
    writeFileSync(join(hostile, 'bomb.yaml'), `${bomb.join('\n')}\n`);
    writeFileSync(join(hostile, 'list.yaml'), '- 1\n- 2\n');
    const loaded = loadProfiles([hostile]);
    expect(messages(loaded.issues)).toEqual([
      expect.stringMatching(/bomb\.yaml: not a readable profile \(.*alias/i) as unknown as string,
      expect.stringMatching(/huge\.yaml: not a readable profile \(larger than 1048576 bytes\)/) as unknown as string,
      expect.stringMatching(/^profile list: must be a mapping/) as unknown as string,
    ]);
  });

  it('the default directory may be missing', () => {
    expect(loadProfiles(['/etc/fieldgate/profiles']).issues.filter((i) => i.path.includes('profileDirs'))).toEqual([]);
  });
});

describe('hostile profile references', () => {
  it.each([
    { name: 'a number', profile: 42, message: 'devices[0].profile: must be a profile name or { name, address } (got 42)' },
    { name: 'an empty list', profile: [], message: 'devices[0].profile: must name 1 to 16 profiles (got 0)' },
    { name: 'a flood of entries', profile: Array.from({ length: 10_000 }, () => 'eastron-sdm630'), message: 'devices[0].profile: must name 1 to 16 profiles (got 10000)' },
    { name: 'the same profile twice', profile: ['eastron-sdm120', 'eastron-sdm120'], message: 'devices[0].profile[1]: "eastron-sdm120" is listed twice: a second instance needs its own address and prefix' },
    { name: 'a nested mapping', profile: { name: { deep: true } }, message: 'devices[0].profile.name: must be a non-empty string' },
    { name: 'an unknown key', profile: { name: 'sunspec-common', adress: 3 }, message: 'devices[0].profile.adress: unknown key (did you mean "address"?)' },
    { name: 'an address out of range', profile: { name: 'sunspec-common', address: 70000 }, message: 'devices[0].profile.address: must be 0..65535 (got 70000)' },
    { name: 'a bad prefix', profile: { name: 'sunspec-common', prefix: 'a-b' }, message: 'devices[0].profile.prefix: must be 1 to 16 letters, digits or "_" (got "a-b")' },
    { name: 'a reserved name', profile: '__proto__', message: 'devices[0].profile: unknown profile "__proto__"; `fieldgate profiles` lists them' },
  ])('$name is one clear issue', ({ profile, message }) => {
    expect(messages(check({ profile }).issues)).toEqual([message]);
  });

  it('places a model past the end of the address space as one clear issue', () => {
    expect(messages(check({ profile: { name: 'sunspec-inverter-3ph', address: 65500 } }).issues))
      .toEqual(['devices[0].profile.address: model 103 (52 registers) at 65500 runs past the last address 65535']);
  });
});

describe('point keys for SunSpec-style maps', () => {
  const point = (extra: Record<string, unknown>) => messages(check({ points: [{ id: 'p', table: 'holding', address: 0, ...extra }] }).issues);
  it.each([
    [{ type: 'float32', notImplemented: 0 }, 'devices[0].points[0].notImplemented: only integer types have a "not implemented" value (type is float32)'],
    [{ type: 'int16', notImplemented: 40000 }, 'devices[0].points[0].notImplemented: must be a raw int16 value -32768..32767 (got 40000)'],
    [{ type: 'uint16', notImplemented: 1.5 }, 'devices[0].points[0].notImplemented: must be a raw uint16 value 0..65535 (got 1.5)'],
    [{ type: 'string', length: 2, notImplemented: 'n/a' }, 'devices[0].points[0].notImplemented: for a string only "" (every register NUL) (got "n/a")'],
    [{ type: 'string', length: 2, scaleFactor: 'q' }, 'devices[0].points[0].scaleFactor: only numeric types can be scaled (type is string)'],
    [{ type: 'int16', scaleFactor: 'p' }, 'devices[0].points[0].scaleFactor: a point cannot be its own scale factor'],
    [{ type: 'int16', scaleFactor: 'p', writable: true }, 'devices[0].points[0].scaleFactor: a point scaled by another register cannot be writable'],
    [{ unit: 'x'.repeat(33) }, 'devices[0].points[0].unit: must be at most 32 characters'],
  ])('%j', (extra, message) => {
    expect(point(extra)).toEqual([message]);
  });

  it('a scale factor must be a plain int16 point', () => {
    const result = check({ points: [
      { id: 'W', table: 'holding', address: 0, type: 'int16', scaleFactor: 'F32' },
      { id: 'V', table: 'holding', address: 1, type: 'int16', scaleFactor: 'W' },
      { id: 'F32', table: 'holding', address: 2, type: 'float32' },
    ] });
    expect(messages(result.issues)).toEqual([
      'devices[0].points[0].scaleFactor: "F32" must be an int16 point (it is float32)',
      'devices[0].points[1].scaleFactor: "W" is scaled by another point itself',
    ]);
  });
});

describe('identification carried to the device', () => {
  it('places a SunSpec model\'s ID register with the model and names the models read at the same registers', () => {
    const result = check({ profile: ['sunspec-common', { name: 'sunspec-inverter-3ph', address: 50070 }] });
    expect(result.issues).toEqual([]);
    const identification = result.config!.site.devices[0].identification!;
    expect(identification.profiles).toEqual(['sunspec-common', 'sunspec-inverter-3ph']);
    expect(identification.registers.map((r) => [r.point.address, r.values])).toEqual([[40002, [1]], [50070, [103]]]);
    // Only the common model's register is at the usual place here: the other models (usually at 40070) are not judged.
    expect(identification.others.map((o) => o.name)).toEqual([]);
    const usual = check({ profile: ['sunspec-common', 'sunspec-inverter-3ph'] }).config!.site.devices[0].identification!;
    const others = usual.others.map((o) => o.name);
    expect(others).toEqual(expect.arrayContaining(['sunspec-inverter-1ph', 'sunspec-inverter-split', 'sunspec-meter-1ph', 'sunspec-meter-delta', 'sunspec-meter-split', 'sunspec-meter-wye']));
    expect(others).not.toContain('sunspec-inverter-3ph');
    expect(others).not.toContain('sunspec-mppt');
  });

  it('is off with identify: false, and absent for a profile without identification', () => {
    expect(check({ profile: 'sunspec-common', identify: false }).config!.site.devices[0].identification).toBeUndefined();
    expect(check({ profile: 'eastron-sdm630' }).config!.site.devices[0].identification).toBeUndefined();
  });
});
