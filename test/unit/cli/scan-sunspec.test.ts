// scan --sunspec proposes a profile for a model as long as every point the profile reads fits in
// the length the device reports (the common model is often 65: no trailing pad), never shorter.
import { describe, expect, it } from 'vitest';
import { describeSunSpecUnit } from '../../../src/cli/scan-sunspec.js';
import { sunspecLengthNeeded } from '../../../src/core/config/sunspec-fit.js';
import { loadProfiles } from '../../../src/ops/profile-library.js';

const library = loadProfiles([]).library;

function describeCommon(length: number): string {
  const models = [{ id: 1, length, address: 40002 }, { id: 103, length: 50, address: 40004 + length }];
  return describeSunSpecUnit({ unit: 1, chain: { found: true, base: 40000, models } }, library, 'bus1');
}

describe('scan --sunspec: model length against the profile', () => {
  it('the points of each shipped SunSpec profile need what its model defines, less trailing padding', () => {
    // Model 1 defines 66 registers; its last one is Pad, which the profile does not read.
    expect(sunspecLengthNeeded(library.get('sunspec-common')!)).toBe(65);
    expect(sunspecLengthNeeded(library.get('sunspec-inverter-3ph')!)).toBe(50);
    expect(sunspecLengthNeeded(library.get('sunspec-mppt')!)).toBe(28);
  });

  it.each([66, 65])('accepts a common model of length %i (DA, the last point read, ends at 65)', (length) => {
    const text = describeCommon(length);
    expect(text).toContain(`  model 1 at 40002, length ${length}: sunspec-common\n`);
    // The inverter model follows right after: placed at its address when that is not the usual 40070.
    expect(text).toContain(length === 66 ? 'profile: [sunspec-common, sunspec-inverter-3ph]\n' : `profile: [sunspec-common, { name: sunspec-inverter-3ph, address: ${40004 + length} }]\n`);
  });

  it('refuses a common model of length 64: DA would be read from the next model', () => {
    const text = describeCommon(64);
    expect(text).toContain("  model 1 at 40002, length 64: length below the 65 registers sunspec-common's points need: sunspec-common not used\n");
    expect(text).toMatch(/^ {4}profile: \{ name: sunspec-inverter-3ph, address: 40068 \}$/m);
  });
});
