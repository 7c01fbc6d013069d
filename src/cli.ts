// fieldgate command line: dispatches to one module per sub-command.
import type { CliCommand, CliIo } from './cli/io.js';
import { EXIT_USAGE } from './cli/io.js';
import { FIELDGATE_VERSION } from './version.js';

type Loader = () => Promise<CliCommand>;

const COMMANDS: Record<string, { summary: string; load: Loader }> = {
  status: { summary: 'show the running daemon\'s status as tables', load: async () => (await import('./cli/status.js')).runStatus },
};

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return [`fieldgate ${FIELDGATE_VERSION}: Modbus/serial to device-cloud edge gateway`, '', 'usage: fieldgate <command> [options]', '', ...lines, '', 'fieldgate <command> --help shows the options of a command.', ''].join('\n');
}

export async function main(argv: string[], io: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env }): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(usage());
    return name === undefined ? EXIT_USAGE : 0;
  }
  if (name === '--version') {
    io.stdout.write(`${FIELDGATE_VERSION}\n`);
    return 0;
  }
  const command = COMMANDS[name];
  if (command === undefined) {
    io.stderr.write(`fieldgate: unknown command "${name}"\n\n${usage()}`);
    return EXIT_USAGE;
  }
  const run = await command.load();
  return run(rest, io);
}
