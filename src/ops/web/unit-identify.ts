// What a unit found by the page's scan is, as far as the profile library can tell: each distinct
// identification register of the library's profiles read once through the running bus (between
// polls, at the cloud's priority), and the profiles whose every register matches.
import { decodeIdentification, identificationAt, matchingProfiles, readIdentifications, type IdentificationRead } from '../../core/config/identification-match.js';
import type { DeviceProfile } from '../../core/config/profile-types.js';
import { ModbusExceptionError, RequestCancelledError } from '../../field/modbus/errors.js';
import type { RemoteReadBus } from '../self/commands.js';

export interface UnitIdentity {
  unit: number;
  /** Profiles of the library whose identification the answers match (empty: the library cannot tell). */
  matches: string[];
  /** What each register said, for people: `holding 28 = 120`, `input 11: refused (...)`. */
  readings: string[];
}

/** A read refused by the device says it has no such register; silence says nothing. A closed page stops the reads. */
async function readOne(bus: RemoteReadBus, unit: number, table: 'holding' | 'input', address: number, count: number, signal?: AbortSignal): Promise<IdentificationRead> {
  try {
    const block = await bus.read(unit, table, address, count, { priority: 'high', ...(signal ? { signal } : {}) });
    return { kind: 'words', words: Array.from(block.words ?? []) };
  } catch (err) {
    if (err instanceof RequestCancelledError) throw err;
    if (err instanceof ModbusExceptionError) return { kind: 'refused', detail: err.message };
    return { kind: 'silent', detail: (err as Error).message };
  }
}

export async function identifyUnit(bus: RemoteReadBus, unit: number, profiles: readonly DeviceProfile[], signal?: AbortSignal): Promise<UnitIdentity> {
  const withIdentity = profiles.filter((p) => p.identification !== undefined);
  const registers = withIdentity.flatMap((p) => identificationAt(p));
  const answerOf = await readIdentifications(registers, (table, address, count) => readOne(bus, unit, table, address, count, signal));
  const readings = new Set<string>();
  for (const register of registers) {
    const answer = answerOf(register);
    if (!answer) continue;
    const where = `${register.point.table} ${register.point.address}`;
    if (answer.kind === 'refused') readings.add(`${where}: refused`);
    else if (answer.kind === 'silent') readings.add(`${where}: no answer`);
    else readings.add(`${where} = ${JSON.stringify(decodeIdentification(register, answer.words) ?? answer.words)}`);
  }
  return { unit, matches: matchingProfiles(withIdentity, answerOf), readings: [...readings] };
}
