// Device profiles: a model's points and device defaults as its manual prescribes (profiles/*.yaml).
import type { PointConfig } from './site-types.js';

/** Where a profile's facts come from: the manufacturer's or the standard's published document. */
export interface ProfileSource {
  title: string;
  /** Version or date of the document. */
  version: string;
  /** Table, section or page of the register map. */
  table: string;
  url?: string;
  notes?: string;
  /**
   * primary: the addresses were read in the manufacturer's (or the standard's) document itself;
   * secondary: that document could not be read, they come from other material (say how in notes).
   */
  quality: SourceQuality;
}

export const SOURCE_QUALITIES = ['primary', 'secondary'] as const;
export type SourceQuality = (typeof SOURCE_QUALITIES)[number];

/** A SunSpec model: its points are offsets from the model's ID register, placed where the device keeps it. */
export interface SunSpecPlacement {
  model: number;
  /** Registers after the ID and L registers (the L value). */
  length: number;
  /** Address of the ID register in the usual layout (SunS at 40000, common model first). */
  defaultAddress: number;
}

/**
 * A register whose value names the model (a meter code, a model register, a SunSpec common model's
 * Mn/Md string), as the manufacturer's document gives it. Addresses are absolute, also in SunSpec profiles.
 */
export interface IdentificationRegister {
  /** The register read as a point (id "identification_N"): table, address, type, length, word and byte order. */
  point: PointConfig;
  /** Values this profile's model shows there; any one matches. Strings compare with trailing NULs and spaces cut. */
  values: readonly (number | string)[];
  /** What the document calls the register and where it says so ("Meter code (FC02h), section 1.3.1, page 29"). */
  label: string;
}

export interface ProfileIdentification {
  /** Every register must hold one of its values for the device to be this model. */
  registers: readonly IdentificationRegister[];
}

export interface DeviceProfile {
  name: string;
  vendor: string;
  model: string;
  firmware?: string;
  source: ProfileSource;
  sunspec?: SunSpecPlacement;
  /** How a device shows it is this model; absent = it cannot be told (no such register documented). */
  identification?: ProfileIdentification;
  /** Device keys (pollIntervalMs, wordOrder, byteOrder, limits, report) as the site file spells them. */
  device: Readonly<Record<string, unknown>>;
  /** Point mappings as the site file spells them (addresses relative to the model for SunSpec). */
  points: readonly Readonly<Record<string, unknown>>[];
  /** The file it was read from. */
  file: string;
}

/** The profiles a site can name: shipped ones, replaced by a site's own of the same name. */
export interface ProfileLibrary {
  get(name: string): DeviceProfile | undefined;
  names(): string[];
}

export function libraryOf(profiles: Iterable<DeviceProfile>): ProfileLibrary {
  const byName = new Map([...profiles].map((profile) => [profile.name, profile]));
  return { get: (name) => byName.get(name), names: () => [...byName.keys()].sort() };
}

export const EMPTY_LIBRARY: ProfileLibrary = libraryOf([]);
