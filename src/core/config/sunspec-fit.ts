// Whether a SunSpec model a device reports is long enough for a profile: every point the profile
// reads must end inside the model, or the read would report the next model's registers.
import { widthOf, type ValueType } from '../points/types.js';
import type { DeviceProfile } from './profile-types.js';

/**
 * Registers after ID and L that the profile's points need (its last point's end), which can be
 * less than the model's defined length: trailing padding or points the profile leaves out.
 */
export function sunspecLengthNeeded(profile: DeviceProfile): number {
  let end = 2;
  for (const point of profile.points) {
    const type = (point.type ?? 'uint16') as ValueType;
    const length = typeof point.length === 'number' ? point.length : 1;
    end = Math.max(end, (point.address as number) + widthOf(type, length));
  }
  return end - 2;
}
