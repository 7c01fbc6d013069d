// Device profiles: a model's points and device defaults as its manual prescribes (profiles/*.yaml).
import type { IdentificationRegister } from './site-types.js';

export type { IdentificationRegister } from './site-types.js';

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
  /** Former point ids -> current ones (the point vocabulary renamed them): a site naming a former one is warned, for one release. */
  renamed?: Readonly<Record<string, string>>;
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
