// Walking a SunSpec model chain against register maps a device might really hold, hostile ones too.
import { describe, expect, it } from 'vitest';
import { findSunSpecChain, MAX_MODELS, type RegisterReader } from '../../../src/core/modbus/sunspec-chain.js';

class Absent extends Error {}
class Refused extends Error {}

/** A unit's holding registers; addresses not in `refused` read 0 when unset. */
function unit(words: Record<number, number>, options: { refused?: (address: number) => boolean; absent?: boolean } = {}): { read: RegisterReader; reads: number[] } {
  const reads: number[] = [];
  return {
    reads,
    read: async (address, count) => {
      reads.push(address);
      if (options.absent) throw new Absent('timeout');
      if (options.refused?.(address)) throw new Refused('exception 2');
      return Array.from({ length: count }, (_, i) => words[address + i] ?? 0);
    },
  };
}
const marker = (base: number) => ({ [base]: 0x5375, [base + 1]: 0x6e53 });
const model = (address: number, id: number, length: number) => ({ [address]: id, [address + 1]: length });
const isAbsent = (err: unknown) => err instanceof Absent;

describe('findSunSpecChain', () => {
  it('walks common + inverter to the end marker', async () => {
    const { read } = unit({ ...marker(40000), ...model(40002, 1, 66), ...model(40070, 103, 50), ...model(40122, 0xffff, 0) });
    expect(await findSunSpecChain(read, isAbsent)).toEqual({ found: true, base: 40000, models: [{ id: 1, length: 66, address: 40002 }, { id: 103, length: 50, address: 40070 }] });
  });

  it('tries 50000 and 0 when 40000 is refused or holds something else', async () => {
    const at50000 = unit({ ...marker(50000), ...model(50002, 1, 66), ...model(50070, 0xffff, 0) }, { refused: (a) => a === 40000 });
    expect(await findSunSpecChain(at50000.read, isAbsent)).toMatchObject({ found: true, base: 50000 });
    const at0 = unit({ 40000: 1234, ...marker(0), ...model(2, 1, 66), ...model(70, 0xffff, 0) });
    expect(await findSunSpecChain(at0.read, isAbsent)).toMatchObject({ found: true, base: 0, models: [{ id: 1, address: 2 }] });
  });

  it('says why there is no chain, and stops at once when the unit does not answer', async () => {
    expect(await findSunSpecChain(unit({}).read, isAbsent)).toEqual({ found: false, problem: 'no SunS marker (40000: no SunS marker; 50000: no SunS marker; 0: no SunS marker)' });
    const silent = unit({}, { absent: true });
    expect(await findSunSpecChain(silent.read, isAbsent)).toMatchObject({ found: false, problem: expect.stringMatching(/^no answer at 40000/) });
    expect(silent.reads).toEqual([40000]);
  });

  it.each([
    { name: 'a header that cannot be read', words: { ...marker(40000), ...model(40002, 1, 66) }, refused: (a: number) => a === 40070, problem: /model header at 40070 failed/, models: 1 },
    { name: 'no end marker (model id 0 follows)', words: { ...marker(40000), ...model(40002, 1, 66) }, problem: /model id 0 at 40070/, models: 1 },
    { name: 'a length that runs past the address space', words: { ...marker(40000), ...model(40002, 1, 65535) }, problem: /runs past the last address/, models: 1 },
  ])('$name: the models found so far and the problem', async ({ words, refused, problem, models }) => {
    const result = await findSunSpecChain(unit(words, { refused }).read, isAbsent);
    expect(result).toMatchObject({ found: true, problem: expect.stringMatching(problem) });
    expect(result.found && result.models).toHaveLength(models);
  });

  it('stops a chain of endless zero-length models', async () => {
    const words: Record<number, number> = { ...marker(40000) };
    for (let i = 0; i < 200; i++) Object.assign(words, model(40002 + 2 * i, 64000 + i, 0));
    const result = await findSunSpecChain(unit(words).read, isAbsent);
    expect(result).toMatchObject({ found: true, problem: `more than ${MAX_MODELS} models: stopped` });
    expect(result.found && result.models).toHaveLength(MAX_MODELS);
  });
});
