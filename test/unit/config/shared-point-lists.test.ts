// Devices with the same point list share one frozen definition (list, codecs, read plan for the
// same limits); a device whose points differ in anything keeps its own. Sharing changes no value:
// each device compiles to what it compiles to alone.
import { describe, expect, it } from 'vitest';
import { validateSite } from '../../../src/core/config/site.js';
import { compileSite, type CompiledDevice } from '../../../src/core/config/compile.js';
import { compileSharedSite } from '../../../src/core/config/shared-point-lists.js';

const bus = { name: 'b', kind: 'tcp', host: '127.0.0.1', port: 502 };
const meter = (extra: Record<string, unknown> = {}) => [
  { id: 'v', table: 'holding', address: 0, scale: 0.1, report: { mode: 'change', deadband: 0.5 }, ...extra },
  { id: 'e', table: 'input', address: 10, type: 'uint32' },
  { id: 'ok', table: 'coil', address: 3 },
];

function compile(devices: unknown[]): CompiledDevice[] {
  const result = validateSite({ buses: [bus], devices });
  expect(result.issues).toEqual([]);
  return [...result.compiled!.devices];
}

/** One device compiled in a site of its own. */
function alone(device: unknown): CompiledDevice {
  return compile([device])[0]!;
}

describe('shared point lists', () => {
  it('shares the list, codecs and plan of devices with the same points, and each compiles as it would alone', () => {
    const raw = [1, 2, 3].map((unit) => ({ name: `m${unit}`, bus: 'b', unitId: unit, points: meter() }));
    const [a, b, c] = compile(raw);
    expect(b!.config.points).toBe(a!.config.points);
    expect(c!.codecs).toBe(a!.codecs);
    expect(c!.plan).toBe(a!.plan);
    expect(b!.config.name).toBe('m2');
    expect(b!.config.unitId).toBe(2);
    for (const [index, device] of [a, b, c].entries()) expect(device).toEqual(alone(raw[index]));
  });

  it('shares the list and codecs but plans again for other limits', () => {
    const [a, b] = compile([
      { name: 'm1', bus: 'b', unitId: 1, points: meter() },
      { name: 'm2', bus: 'b', unitId: 2, points: meter(), limits: { maxGap: 0 } },
    ]);
    expect(b!.config.points).toBe(a!.config.points);
    expect(b!.codecs).toBe(a!.codecs);
    expect(b!.plan).not.toBe(a!.plan);
    expect(b!.plan).toEqual(alone({ name: 'm2', bus: 'b', unitId: 2, points: meter(), limits: { maxGap: 0 } }).plan);
  });

  it.each<[string, Record<string, unknown>]>([
    ['a deadband', { report: { mode: 'change', deadband: 0.6 } }],
    ['an offset of -0 against 0', { offset: -0 }],
    ['a unit', { unit: 'V' }],
    ['an address', { address: 1 }],
  ])('keeps apart lists that differ by %s', (_what, change) => {
    const [a, b] = compile([
      { name: 'm1', bus: 'b', unitId: 1, points: meter({ offset: 0 }) },
      { name: 'm2', bus: 'b', unitId: 2, points: meter(change) },
    ]);
    expect(b!.config.points).not.toBe(a!.config.points);
    expect(b!.codecs).not.toBe(a!.codecs);
    expect(b!.config.points[0]).toMatchObject(change);
    expect(b!.codecs.get('v')!.point).toBe(b!.config.points[0]);
  });

  it('freezes what it shares: a device cannot change another device\'s points', () => {
    const [a] = compile([{ name: 'm1', bus: 'b', unitId: 1, points: meter() }, { name: 'm2', bus: 'b', unitId: 2, points: meter() }]);
    expect(Object.isFrozen(a!.config.points)).toBe(true);
    expect(Object.isFrozen(a!.config.points[0])).toBe(true);
    expect(Object.isFrozen(a!.config.points[0]!.report)).toBe(true);
    expect(() => { (a!.config.points[0] as { scale: number }).scale = 2; }).toThrow(TypeError);
  });

  it('shares nothing between two reads of a site (a reload compiles its own)', () => {
    const raw = [{ name: 'm1', bus: 'b', unitId: 1, points: meter() }];
    expect(compile(raw)[0]!.config.points).not.toBe(compile(raw)[0]!.config.points);
  });

  it('compiles a site normalised elsewhere (a list per device) with shared lists, site and compiled alike', () => {
    const { site } = validateSite({ buses: [bus], devices: [1, 2].map((unit) => ({ name: `m${unit}`, bus: 'b', unitId: unit, points: meter() })) });
    const copy = JSON.parse(JSON.stringify(site)) as typeof site & object;
    expect(copy.devices[1]!.points).not.toBe(copy.devices[0]!.points);
    const result = compileSharedSite(copy);
    expect(result.issues).toEqual([]);
    expect(result.site!.devices[1]!.points).toBe(result.site!.devices[0]!.points);
    expect(result.compiled!.devices[1]!.config).toBe(result.site!.devices[1]);
    expect(result.compiled!.devices[1]!.codecs).toBe(result.compiled!.devices[0]!.codecs);
    expect(result.site).toEqual(copy);
    expect(result.compiled!.devices).toEqual(compileSite(JSON.parse(JSON.stringify(site)) as typeof copy).compiled!.devices);
  });
});
