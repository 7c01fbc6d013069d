// Finding a SunSpec device's models (pure, reads injected): the "SunS" marker at one of the usual
// base addresses, then the chain of (ID, L) headers up to the end marker 0xFFFF.

export const SUNSPEC_BASES = [40000, 50000, 0] as const;
export const SUNS_MARKER = [0x5375, 0x6e53] as const;
const END_ID = 0xffff;
/** More models than any device has: a chain longer than this is garbage (or a loop). */
export const MAX_MODELS = 64;

export interface SunSpecModel {
  id: number;
  /** Registers after ID and L. */
  length: number;
  /** Address of the model's ID register. */
  address: number;
}

export type SunSpecChain = { found: true; base: number; models: SunSpecModel[]; problem?: string } | { found: false; problem: string };

/** Reads `count` holding registers at `address`; throws when the unit refuses or does not answer. */
export type RegisterReader = (address: number, count: number) => Promise<ArrayLike<number>>;

/** `isAbsent(err)`: the unit did not answer at all (no point trying other bases). */
export async function findSunSpecChain(read: RegisterReader, isAbsent: (err: unknown) => boolean): Promise<SunSpecChain> {
  const tried: string[] = [];
  for (const base of SUNSPEC_BASES) {
    let words: ArrayLike<number>;
    try {
      words = await read(base, 2);
    } catch (err) {
      if (isAbsent(err)) return { found: false, problem: `no answer at ${base}: ${(err as Error).message}` };
      tried.push(`${base}: ${(err as Error).message}`);
      continue;
    }
    if (words[0] === SUNS_MARKER[0] && words[1] === SUNS_MARKER[1]) return { found: true, base, ...(await walkModels(read, base + 2)) };
    tried.push(`${base}: no SunS marker`);
  }
  return { found: false, problem: `no SunS marker (${tried.join('; ')})` };
}

async function walkModels(read: RegisterReader, first: number): Promise<{ models: SunSpecModel[]; problem?: string }> {
  const models: SunSpecModel[] = [];
  let address = first;
  while (models.length < MAX_MODELS) {
    if (address + 2 > 65536) return { models, problem: `the chain runs past the last address at ${address}` };
    let header: ArrayLike<number>;
    try {
      header = await read(address, 2);
    } catch (err) {
      return { models, problem: `reading the model header at ${address} failed: ${(err as Error).message}` };
    }
    const [id, length] = [header[0], header[1]];
    if (id === END_ID) return { models };
    if (id === 0) return { models, problem: `model id 0 at ${address}: not a SunSpec chain from here` };
    models.push({ id, length, address });
    address += 2 + length;
  }
  return { models, problem: `more than ${MAX_MODELS} models: stopped` };
}
