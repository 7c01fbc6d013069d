// compileSite: codecs and starting read plans built once and frozen; a device that cannot be
// compiled is a config issue with its path (exit 78 through ConfigError), never a throw.
import { describe, expect, it } from 'vitest';
import { compileDevice, compileSite } from '../../../src/core/config/compile.js';
import { ConfigError, formatIssue } from '../../../src/core/config/issues.js';
import { checkConfig } from '../../../src/ops/site-file.js';
import { DEVICE_DEFAULTS } from '../../../src/core/config/devices.js';
import type { DeviceConfig, SiteConfig } from '../../../src/core/config/site-types.js';
import { planReads } from '../../../src/core/modbus/plan.js';
import { deviceConfig, pointConfig } from '../../helpers/device-configs.js';

function site(...devices: DeviceConfig[]): SiteConfig {
  return { buses: [], devices };
}

// Settings that validation never lets through, handed to compileSite directly: the compile step
// must still turn each into an issue line with its path, as the golden config cases do.
const BROKEN: Array<{ name: string; device: DeviceConfig; expected: string[] }> = [
  {
    name: 'a scale of 0',
    device: deviceConfig({ name: 'a', points: [pointConfig({ id: 'ok', address: 0 }), pointConfig({ id: 'flat', address: 1, scale: 0 })] }),
    expected: ['devices[0].points[1]: point "flat": scale must be a finite non-zero number (got 0)'],
  },
  {
    name: 'a multi-bit type in a coil table',
    device: deviceConfig({ name: 'a', points: [pointConfig({ id: 'c', address: 0, table: 'coil', type: 'int16' })] }),
    expected: ['devices[0].points[0]: point "c": a coil holds a single bit, type must be bool (got int16)'],
  },
  {
    name: 'a read limit of 0',
    device: deviceConfig({ name: 'a', points: [pointConfig({ id: 'x', address: 0 })], limits: { ...DEVICE_DEFAULTS.limits, maxRegistersPerRead: 0 } }),
    expected: ['devices[0]: cannot plan reads: maxRegistersPerRead must be a positive integer (got 0)'],
  },
];

describe('compileSite', () => {
  it.each(BROKEN)('reports $name as an issue with its path', ({ device, expected }) => {
    const result = compileSite(site(device));
    expect(result.compiled).toBeUndefined();
    expect(result.issues.map(formatIssue)).toEqual(expected);
    expect(() => compileDevice(device)).toThrow(ConfigError);
  });

  it('reports every broken device at once', () => {
    const result = compileSite(site(BROKEN[0].device, { ...BROKEN[2].device, name: 'b' }));
    expect(result.issues.map((issue) => issue.path)).toEqual(['devices[0].points[1]', 'devices[1]']);
  });

  it('builds one frozen codec per point and the plan planReads makes', () => {
    const device = deviceConfig({ name: 'm', points: [pointConfig({ id: 'a', address: 0 }), pointConfig({ id: 'b', address: 3 }), pointConfig({ id: 'c', address: 200 })] });
    const compiled = compileSite(site(device)).compiled!;
    const only = compiled.device('m')!;
    expect(compiled.devices).toEqual([only]);
    expect([...only.codecs.keys()]).toEqual(['a', 'b', 'c']);
    expect(only.codecs.get('b')!.point).toBe(device.points[1]);
    expect(only.plan).toEqual(planReads(device.points, device.limits));
    expect(Object.isFrozen(only)).toBe(true);
    expect(Object.isFrozen(only.plan)).toBe(true);
    expect(Object.isFrozen(only.plan[0])).toBe(true);
    expect(Object.isFrozen(only.codecs.get('a'))).toBe(true);
    expect(compiled.device('nope')).toBeUndefined();
  });

  it('is what a validated config carries: the same codecs the command literals were checked with', () => {
    const { config, issues } = checkConfig({
      gateway: { stateDir: '/tmp/fg-compile-test' },
      buses: [{ name: 'plc', kind: 'tcp', host: '127.0.0.1' }],
      devices: [{ name: 'a', bus: 'plc', unitId: 1, points: [{ id: 'sp', table: 'holding', address: 0, type: 'int16', writable: true }] }],
    }, {});
    expect(issues).toEqual([]);
    const compiled = config!.compiled.device('a')!;
    expect(compiled.config).toBe(config!.site.devices[0]);
    expect(compiled.codecs.get('sp')!.encode(7)).toMatchObject({ ok: true, value: 7 });
    expect(compiled.plan.map((r) => [r.table, r.start, r.count])).toEqual([['holding', 0, 1]]);
  });
});
