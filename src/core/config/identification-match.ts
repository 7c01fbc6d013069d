// Does a device's answer at a profile's identification registers name that profile's model? (pure)
import { compilePoint } from '../points/codec.js';
import type { DeviceProfile, IdentificationRegister, ProfileIdentification } from './profile-types.js';

/** What a read of one identification register brought back. */
export type IdentificationRead =
  | { kind: 'words'; words: readonly number[] }
  /** A Modbus exception (the device has no such register, or refuses it). */
  | { kind: 'refused'; detail: string }
  /** No answer in time, or the line failed: nothing is known about the model. */
  | { kind: 'silent'; detail: string };

export type IdentifyVerdict =
  | { kind: 'match' }
  /** A register holds a value this model never shows: the device is another model. */
  | { kind: 'mismatch'; label: string; got: number | string; expected: readonly (number | string)[] }
  /** The device did not say (no answer, or a register refused): the model is not known. */
  | { kind: 'unknown'; label: string; why: 'refused' | 'silent'; detail: string };

/** Where a register is read: the same read serves every profile asking for the same registers. */
export function readKey(register: IdentificationRegister): string {
  return `${register.point.table}:${register.point.address}:${register.point.length}`;
}

/** Trailing NULs and spaces are padding in every string register map seen. */
function normalise(value: number | string): number | string {
  return typeof value === 'string' ? value.replace(/[\0 ]+$/, '') : value;
}

export function decodeIdentification(register: IdentificationRegister, words: readonly number[]): number | string | undefined {
  if (words.length !== register.point.length) return undefined;
  const value = compilePoint(register.point).decodeRegisters(words);
  return typeof value === 'number' || typeof value === 'string' ? normalise(value) : undefined;
}

/**
 * A value read and not among the model's is decisive (mismatch), whatever else the device says;
 * otherwise a register without an answer leaves the model unknown; otherwise the device is this model.
 */
export function judgeIdentification(identification: ProfileIdentification, read: (register: IdentificationRegister) => IdentificationRead | undefined): IdentifyVerdict {
  let unknown: IdentifyVerdict | undefined;
  for (const register of identification.registers) {
    const answer = read(register) ?? { kind: 'silent', detail: 'not read' };
    if (answer.kind !== 'words') {
      unknown ??= { kind: 'unknown', label: register.label, why: answer.kind, detail: answer.detail };
      continue;
    }
    const got = decodeIdentification(register, answer.words);
    if (got === undefined) {
      unknown ??= { kind: 'unknown', label: register.label, why: 'silent', detail: `${answer.words.length} register(s) where ${register.point.length} were asked` };
      continue;
    }
    const expected = register.values.map(normalise);
    if (!expected.includes(got)) return { kind: 'mismatch', label: register.label, got, expected };
  }
  return unknown ?? { kind: 'match' };
}

/**
 * A profile's identification registers where the device has them: as written, or for a SunSpec
 * profile (offsets from the model's ID register, like its points) placed at `base` (default: the usual place).
 */
export function identificationAt(profile: DeviceProfile, base = profile.sunspec?.defaultAddress ?? 0): IdentificationRegister[] {
  const registers = profile.identification?.registers ?? [];
  const shift = profile.sunspec ? base : 0;
  return registers.map((r) => (shift === 0 ? r : { ...r, point: { ...r.point, address: r.point.address + shift } }));
}

/** Profiles (with identification) whose every register matches: what the device is, as far as the library knows. */
export function matchingProfiles(profiles: Iterable<DeviceProfile>, read: (register: IdentificationRegister) => IdentificationRead | undefined): string[] {
  const names: string[] = [];
  for (const profile of profiles) {
    if (profile.identification && judgeIdentification({ registers: identificationAt(profile) }, read).kind === 'match') names.push(profile.name);
  }
  return names.sort();
}

/** One line for people: what was expected and what the device said. */
export function describeVerdict(verdict: IdentifyVerdict): string {
  switch (verdict.kind) {
    case 'match': return 'identified';
    case 'mismatch': return `${verdict.label} is ${JSON.stringify(verdict.got)}, the profile's model shows ${verdict.expected.map((v) => JSON.stringify(v)).join(' or ')}`;
    case 'unknown': return `${verdict.label}: ${verdict.why === 'refused' ? 'refused' : 'no answer'} (${verdict.detail})`;
  }
}

/** One read of `count` registers; the caller turns its errors into 'refused' or 'silent'. */
export type IdentificationReader = (table: 'holding' | 'input', address: number, count: number) => Promise<IdentificationRead>;

/** More distinct reads than this for one device is a mistake (8 registers x a library of profiles). */
export const MAX_IDENTIFICATION_READS = 64;

/**
 * Reads each distinct identification register once (many profiles share one, a meter code). A
 * device that answers nothing at the first read is taken as absent: the rest are not tried, so a
 * silent unit costs one timeout, not one per register.
 */
export async function readIdentifications(registers: Iterable<IdentificationRegister>, reader: IdentificationReader): Promise<(register: IdentificationRegister) => IdentificationRead | undefined> {
  const answers = new Map<string, IdentificationRead>();
  let answered = false;
  for (const register of registers) {
    const key = readKey(register);
    if (answers.has(key)) continue;
    if (answers.size >= MAX_IDENTIFICATION_READS) break;
    const { table, address, length } = register.point;
    const answer = await reader(table as 'holding' | 'input', address, length);
    answers.set(key, answer);
    if (answer.kind !== 'silent') answered = true;
    else if (!answered) break;
  }
  return (register) => answers.get(readKey(register));
}
