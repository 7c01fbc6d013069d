// What a CLI command gets to talk to the world; tests pass their own.
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /** Standard input when a command reads it (`web passwd`); process.stdin when absent. */
  stdin?: NodeJS.ReadableStream;
}

export type CliCommand = (args: string[], io: CliIo) => Promise<number>;

/** `--help` or `-h` anywhere among a command's arguments (before a `--`). */
export function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/** sysexits EX_CONFIG: the config is wrong; systemd must not restart-loop on it. */
export const EXIT_CONFIG = 78;
/** sysexits EX_USAGE: wrong command-line arguments. */
export const EXIT_USAGE = 64;
/** sysexits EX_UNAVAILABLE: a device or service did not answer. */
export const EXIT_UNAVAILABLE = 69;
/** sysexits EX_SOFTWARE: an internal failure (a reload that failed while applying, rolled back). */
export const EXIT_SOFTWARE = 70;
/** sysexits EX_TEMPFAIL: it did not work this time, try again (a file changed while being used). */
export const EXIT_TEMPFAIL = 75;
