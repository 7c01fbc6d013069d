// The problems a seed text is refused with, or [] when it is accepted.
import { parseSeed, SeedError } from '../../../packages/emulator/src/state/seed.js';

export function seedProblems(text: string, now: number): string[] {
  try {
    parseSeed(text, now);
  } catch (err) {
    if (err instanceof SeedError) return err.problems;
    throw err;
  }
  return [];
}
