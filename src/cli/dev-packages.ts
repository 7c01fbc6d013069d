// The emulator and the simulator are development packages (npm workspaces): the service install
// (`npm ci --omit=dev --workspaces=false`) leaves them out, so their commands say so in one line.
import { EXIT_UNAVAILABLE, type CliCommand, type CliIo } from './io.js';

export const DEV_PACKAGES = ['@fieldgate/emulator', '@fieldgate/simulator'] as const;

/** The development package whose absence made an import fail, if that is what failed. */
export function missingDevPackage(err: unknown): string | undefined {
  if (!(err instanceof Error) || Reflect.get(err, 'code') !== 'ERR_MODULE_NOT_FOUND') return undefined;
  return DEV_PACKAGES.find((name) => err.message.includes(`'${name}'`) || err.message.includes(`'${name}/`));
}

/**
 * Imports a module that needs development packages. Without them: writes one line saying so and
 * returns undefined; any other failure is rethrown.
 */
export async function importDevModule<T>(command: string, io: CliIo, load: () => Promise<T>): Promise<T | undefined> {
  try {
    return await load();
  } catch (err) {
    const missing = missingDevPackage(err);
    if (missing === undefined) throw err;
    io.stderr.write(`fieldgate ${command}: ${missing} is a development package, not part of the service install: install with npm ci (without --omit=dev)\n`);
    return undefined;
  }
}

/** A command whose module needs development packages (loaded when it runs). */
export function devCommand(command: string, load: () => Promise<CliCommand>): CliCommand {
  return async (args, io) => {
    const run = await importDevModule(command, io, load);
    return run === undefined ? EXIT_UNAVAILABLE : run(args, io);
  };
}
