// `fieldgate scan --identify`: each unit's identification registers, read once each, and the
// profiles whose model they name.
import { decodeIdentification, identificationAt, matchingProfiles, readIdentifications, type IdentificationRead, type IdentificationReader } from '../core/config/identification-match.js';
import type { DeviceProfile, IdentificationRegister } from '../core/config/profile-types.js';
import { ModbusExceptionError } from '../field/modbus/errors.js';
import type { ModbusTransport } from '../field/modbus/transport.js';

export interface IdentifiedUnit {
  unit: number;
  /** Nothing answered at the first register: the unit is taken as absent. */
  silent: boolean;
  matches: string[];
  /** What each register read said, for people ("holding 256 = 100"). */
  readings: string[];
}

export function transportReader(transport: ModbusTransport, unit: number, timeoutMs: number): IdentificationReader {
  return async (table, address, count) => {
    try {
      const words = table === 'holding'
        ? await transport.readHoldingRegisters(unit, address, count, timeoutMs)
        : await transport.readInputRegisters(unit, address, count, timeoutMs);
      return { kind: 'words', words: Array.from(words) };
    } catch (err) {
      if (err instanceof ModbusExceptionError) return { kind: 'refused', detail: err.exceptionName };
      return { kind: 'silent', detail: (err as Error).message };
    }
  };
}

function describeReading(register: IdentificationRegister, answer: IdentificationRead | undefined): string | undefined {
  if (!answer) return undefined;
  const where = `${register.point.table} ${register.point.address}`;
  if (answer.kind === 'refused') return `${where}: refused (${answer.detail})`;
  if (answer.kind === 'silent') return `${where}: no answer`;
  return `${where} = ${JSON.stringify(decodeIdentification(register, answer.words) ?? answer.words)}`;
}

export async function identifyUnit(profiles: readonly DeviceProfile[], reader: IdentificationReader, unit: number): Promise<IdentifiedUnit> {
  const registers = profiles.flatMap((p) => identificationAt(p));
  const answerOf = await readIdentifications(registers, reader);
  const seen = new Set<string>();
  const readings: string[] = [];
  for (const register of registers) {
    const line = describeReading(register, answerOf(register));
    if (line !== undefined && !seen.has(line)) readings.push(line);
    if (line !== undefined) seen.add(line);
  }
  const silent = registers.length > 0 && registers.every((r) => { const a = answerOf(r); return a === undefined || a.kind === 'silent'; });
  return { unit, silent, matches: matchingProfiles(profiles, answerOf), readings };
}

export function describeIdentifiedUnit(result: IdentifiedUnit): string {
  if (result.silent) return `unit ${result.unit}: no answer\n`;
  const read = result.readings.length > 0 ? ` (read: ${result.readings.join(', ')})` : '';
  if (result.matches.length === 0) return `unit ${result.unit}: no profile's identification matches${read}\n`;
  return `unit ${result.unit}: ${result.matches.join(' or ')}${read}\n`;
}
