// The site checks in steps (a reload's reader gives the event loop a turn between devices): one
// step per device, and the same answer as the checks run at once, issues included.
import { describe, expect, it } from 'vitest';
import { validateSite, validateSiteSteps } from '../../../src/core/config/site.js';
import { runSteps } from '../../../src/core/config/steps.js';
import { checkConfig, checkConfigSteps } from '../../../src/ops/site-file.js';

const bus = { name: 'b', kind: 'tcp', host: '127.0.0.1', port: 502 };
const device = (unit: number, extra: Record<string, unknown> = {}) => ({ name: `m${unit}`, bus: 'b', unitId: unit, points: [{ id: 'v', table: 'holding', address: 0 }], ...extra });
const gateway = { stateDir: '/tmp/fg-check-steps', health: { enabled: false } };

function stepsOf<T>(steps: Generator<void, T>): { yields: number; value: T } {
  let yields = 0;
  for (let step = steps.next(); ; step = steps.next()) {
    if (step.done) return { yields, value: step.value };
    yields += 1;
  }
}

describe('site checks in steps', () => {
  it('yield between devices and answer as the checks run at once', () => {
    const raw = { buses: [bus], devices: [1, 2, 3, 4].map((unit) => device(unit)) };
    const { yields, value } = stepsOf(validateSiteSteps(raw));
    expect(yields).toBe(3);
    const atOnce = validateSite(raw);
    expect(value.issues).toEqual([]);
    expect(value.site).toEqual(atOnce.site);
    expect(value.compiled!.devices).toEqual(atOnce.compiled!.devices);
    expect(runSteps(validateSiteSteps(raw)).site).toEqual(value.site);
  });

  it('report the same issues, each with its path, a duplicate unit and a broken device among them', () => {
    const raw = { gateway, buses: [bus], devices: [device(1), device(1, { name: 'twin' }), device(2, { pollIntervalMs: -1 }), device(3)] };
    const { yields, value } = stepsOf(checkConfigSteps(raw, {}));
    expect(yields).toBe(3);
    expect(value.config).toBeUndefined();
    expect(value.issues.map((issue) => issue.path)).toEqual(expect.arrayContaining(['devices[1].unitId', 'devices[2].pollIntervalMs']));
    expect(value).toEqual(checkConfig(raw, {}));
  });

  it('give the same config for a good site', () => {
    const raw = { gateway, buses: [bus], devices: [device(1), device(2)] };
    const { value } = stepsOf(checkConfigSteps(raw, {}));
    expect(value.issues).toEqual([]);
    const atOnce = checkConfig(raw, {}).config!;
    expect({ ...value.config!, compiled: undefined }).toEqual({ ...atOnce, compiled: undefined });
    expect(value.config!.compiled.devices).toEqual(atOnce.compiled.devices);
  });
});
