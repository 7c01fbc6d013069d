// A simulated profile unit whose point is also an identification register (Sungrow's device type
// code at 5000, sent as 4999) serves one value there: the code the model shows, and the point
// decodes to it, so the identification check and the point agree.
import { describe, expect, it } from 'vitest';
import { loadProfiles } from '../../../src/ops/profile-library.js';
import { placeProfiles, profileUnit } from '../../../packages/simulator/src/index.js';

const library = loadProfiles([]).library;

describe('profile unit', () => {
  it('holds the identification value in a point that shares its register', () => {
    const placed = placeProfiles(['sungrow-sh'], library);
    expect(placed.problems).toEqual([]);
    const unit = profileUnit(1, placed.placements);
    const code = unit.held.find((held) => held.point.id === 'device_type_code')!;
    expect(code.point.address).toBe(4999);
    expect(code.expected).toBe(0xd17);
    // Every value the unit serves at 4999 is that same code: no point value left underneath.
    const at = unit.spec.values.filter((v) => v.table === 'input' && v.address === 4999);
    expect(at.length).toBeGreaterThan(0);
    for (const value of at) expect(value.words).toEqual([0xd17]);
  });

  it('leaves a point without identification to its plausible value', () => {
    const unit = profileUnit(1, placeProfiles(['sungrow-sg'], library).placements);
    const code = unit.held.find((held) => held.point.id === 'device_type_code')!;
    expect(code.expected).not.toBe(undefined);
    expect(code.raw).not.toBe(0xd17);
  });
});
