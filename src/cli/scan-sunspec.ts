// `fieldgate scan --sunspec`: each unit's SunSpec models and a site-file device block for them.
import { deviceBlock, profileRefs } from '../core/config/profile-block.js';
import { sunspecLengthNeeded } from '../core/config/sunspec-fit.js';
import type { DeviceProfile, ProfileLibrary } from '../core/config/profile-types.js';
import { findSunSpecChain, type SunSpecChain, type SunSpecModel } from '../core/modbus/sunspec-chain.js';
import { ModbusTimeoutError } from '../field/modbus/errors.js';
import type { ModbusTransport } from '../field/modbus/transport.js';

export interface SunSpecUnit {
  unit: number;
  chain: SunSpecChain;
}

export async function scanSunSpecUnit(transport: ModbusTransport, unit: number, timeoutMs: number): Promise<SunSpecUnit> {
  const read = (address: number, count: number) => transport.readHoldingRegisters(unit, address, count, timeoutMs);
  return { unit, chain: await findSunSpecChain(read, (err) => err instanceof ModbusTimeoutError) };
}

/**
 * The shipped profile of a model, if the model is long enough for every point the profile reads
 * (a device may report a shorter length than the definition's, say without the trailing pad).
 */
function profileOf(model: SunSpecModel, library: ProfileLibrary): { name?: string; note: string } {
  const name = library.names().find((n) => library.get(n)?.sunspec?.model === model.id);
  const profile = name === undefined ? undefined : library.get(name);
  if (!profile?.sunspec) return { note: 'no profile' };
  const needed = sunspecLengthNeeded(profile);
  if (model.length < needed) return { note: `length below the ${needed} registers ${profile.name}'s points need: ${profile.name} not used` };
  return { name: profile.name, note: profile.name };
}

/** Text for one unit: its models, then the device block (or why there is none). */
export function describeSunSpecUnit(found: SunSpecUnit, library: ProfileLibrary, bus: string): string {
  const { unit, chain } = found;
  if (!chain.found) return `unit ${unit}: ${chain.problem}\n`;
  const lines = [`unit ${unit}: SunS at ${chain.base}, ${chain.models.length} model(s)`];
  const matched: { profile: DeviceProfile; address: number }[] = [];
  for (const model of chain.models) {
    const { name, note } = profileOf(model, library);
    lines.push(`  model ${model.id} at ${model.address}, length ${model.length}: ${note}`);
    if (name !== undefined) matched.push({ profile: library.get(name)!, address: model.address });
  }
  const refs = profileRefs(matched);
  if (chain.problem) lines.push(`  chain ends early: ${chain.problem}`);
  lines.push(refs.length > 0 ? `site-file device block:\n${deviceBlock(unit, refs, bus)}` : '  no shipped profile matches these models');
  return `${lines.join('\n')}\n`;
}
