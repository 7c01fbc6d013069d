// Every shipped profile with identification refuses a neighbouring model's identity: the values
// another model shows at the same registers (another profile of the library, another SunSpec model
// placed where this one sits, or a neighbour's code from its own document, cited below).
import { describe, expect, it } from 'vitest';
import { identificationAt, judgeIdentification, readKey, type IdentificationRead } from '../../../src/core/config/identification-match.js';
import type { DeviceProfile, IdentificationRegister } from '../../../src/core/config/profile-types.js';
import { loadProfiles } from '../../../src/ops/profile-library.js';

const library = loadProfiles([]).library;
const identified = library.names().filter((name) => library.get(name)!.identification);

interface Neighbour {
  /** The model whose identity it is, and where its values come from. */
  name: string;
  /** Register key (table:address:length) -> the value the neighbour shows there. */
  shows: Map<string, number | string>;
}

/** Neighbours' codes from their own documents, for profiles no other profile of the library shares a register with. */
const DOCUMENTED: Record<string, Neighbour[]> = {
  // Sungrow, Communication Protocol of PV Grid-Connected String Inverters V1.1.53 (2023-01-13): 3.1 row 7
  // device type code at 5000 (page 6), Appendix 5 Device Information (page 28): SG5.0RT 0x2430, SG10RT 0x2433,
  // SG10KTL 0x26. A string inverter named as the SH hybrid is another model.
  // SMA's Modbus list for the Sunny Tripower 8.0/10.0 (MODBUS-HTML_STP8.0-10.0-3AV-40_GG10_V10), SunSpec rows
  // 40001 SID 0x53756e53 and 40005 Mn 'SMA' (string16): another maker's SunSpec common model where the Datamanager's says 'Fronius'.
  'fronius-datamanager': [{ name: 'SMA Sunny Tripower, SunSpec common model (SMA Modbus list V1.0, row 40005 Mn)', shows: new Map<string, number | string>([['holding:40000:2', 0x53756e53], ['holding:40004:16', 'SMA']]) }],
  'sungrow-sh': [['SG5.0RT', 0x2430], ['SG10RT', 0x2433], ['SG10KTL', 0x26]].map(([name, code]) => ({ name: `${name} (Sungrow SG protocol V1.1.53, Appendix 5)`, shows: new Map([['input:4999:1', code]]) })),
};

/** Profiles with identification for which no neighbour's value at their registers was found in a document. */
const NO_DOCUMENTED_NEIGHBOUR: Record<string, string> = {
  'eastron-sdm120': 'Eastron\'s documents read (SDM120 V2.4, SDM630 V1.8, SDM230 LoRa V1.0) give no other model\'s meter code at FC02h',
  'growatt-vpp': 'the VPP protocol\'s Table 3-1 lists only the models the profile accepts; no other Growatt DTC at 30000 was read',
};

function shownBy(profile: DeviceProfile, base?: number): Map<string, number | string> {
  return new Map(identificationAt(profile, base).map((register) => [readKey(register), register.values[0]]));
}

/** Other profiles of the library whose identification reads the same registers (SunSpec models placed where this one sits). */
function libraryNeighbours(profile: DeviceProfile): Neighbour[] {
  const keys = new Set(identificationAt(profile).map(readKey));
  return identified.filter((name) => name !== profile.name).flatMap((name) => {
    const other = library.get(name)!;
    const base = profile.sunspec && other.sunspec ? profile.sunspec.defaultAddress : undefined;
    const shows = shownBy(other, base);
    return [...shows.keys()].some((key) => keys.has(key)) ? [{ name, shows }] : [];
  });
}

function words(register: IdentificationRegister, value: number | string): number[] {
  if (typeof value === 'string') {
    const bytes = Buffer.alloc(register.point.length * 2);
    bytes.write(value, 'latin1');
    return Array.from({ length: register.point.length }, (_, i) => bytes.readUInt16BE(i * 2));
  }
  const type = register.point.type;
  if (type === 'uint32' || type === 'int32') {
    const unsigned = value >>> 0;
    const pair = [unsigned >>> 16, unsigned & 0xffff];
    return register.point.wordOrder === 'little' ? pair.reverse() : pair;
  }
  return [value & 0xffff];
}

/** The device answers as the neighbour where the neighbour shows something, else as this profile's model. */
function answersOf(profile: DeviceProfile, neighbour: Neighbour): (register: IdentificationRegister) => IdentificationRead {
  const own = shownBy(profile);
  return (register) => {
    const key = readKey(register);
    return { kind: 'words', words: words(register, neighbour.shows.get(key) ?? own.get(key)!) };
  };
}

describe('every profile with identification refuses a neighbouring model\'s identity', () => {
  it('has a neighbour for every identified profile, or says why not', () => {
    const without = identified.filter((name) => libraryNeighbours(library.get(name)!).length === 0 && !DOCUMENTED[name]);
    expect(without).toEqual(Object.keys(NO_DOCUMENTED_NEIGHBOUR).sort());
  });

  it('the EM24 E1 and the RS-485 EM24-DIN are each other\'s neighbour at 000Bh', () => {
    expect(libraryNeighbours(library.get('carlogavazzi-em24-e1')!).map((n) => n.name)).toEqual(['carlogavazzi-em24']);
    expect(libraryNeighbours(library.get('carlogavazzi-em24')!).map((n) => n.name)).toEqual(['carlogavazzi-em24-e1']);
  });

  it('the Sunny Tripower and the Sunny Island are each other\'s neighbour at 30053 (SMA\'s Device type tag)', () => {
    expect(libraryNeighbours(library.get('sma-sunny-tripower-3av-40')!).map((n) => n.name)).toEqual(['sma-sunny-island']);
    expect(libraryNeighbours(library.get('sma-sunny-island')!).map((n) => n.name)).toEqual(['sma-sunny-tripower-3av-40']);
  });

  it.each(identified.filter((name) => !(name in NO_DOCUMENTED_NEIGHBOUR)))('%s', (name) => {
    const profile = library.get(name)!;
    const identification = { registers: identificationAt(profile) };
    // Its own model matches ...
    expect(judgeIdentification(identification, answersOf(profile, { name, shows: new Map() })).kind).toBe('match');
    // ... and each neighbour's identity is another model.
    const neighbours = [...libraryNeighbours(profile), ...(DOCUMENTED[name] ?? [])];
    expect(neighbours.length).toBeGreaterThan(0);
    for (const neighbour of neighbours) {
      expect({ neighbour: neighbour.name, verdict: judgeIdentification(identification, answersOf(profile, neighbour)).kind }).toEqual({ neighbour: neighbour.name, verdict: 'mismatch' });
    }
  });
});
