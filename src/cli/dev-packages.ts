// The emulator and the simulator are development packages (npm workspaces): the service install
// (`npm ci --omit=dev --workspaces=false`) leaves them out, so their commands say so in one line.
import { EXIT_UNAVAILABLE, type CliCommand } from './io.js';

export const DEV_PACKAGES = ['@fieldgate/emulator', '@fieldgate/simulator'] as const;

/** The development package whose absence made an import fail, if that is what failed. */
export function missingDevPackage(err: unknown): string | undefined {
  if (!(err instanceof Error) || Reflect.get(err, 'code') !== 'ERR_MODULE_NOT_FOUND') return undefined;
  return DEV_PACKAGES.find((name) => err.message.includes(`'${name}'`) || err.message.includes(`'${name}/`));
}

/** Loads a command that needs development packages; without them, a command that explains. */
export async function loadDevCommand(command: string, load: () => Promise<CliCommand>): Promise<CliCommand> {
  try {
    return await load();
  } catch (err) {
    const missing = missingDevPackage(err);
    if (missing === undefined) throw err;
    return async (_args, io) => {
      io.stderr.write(`fieldgate ${command}: ${missing} is a development package, not part of the service install: install with npm ci (without --omit=dev)\n`);
      return EXIT_UNAVAILABLE;
    };
  }
}
