// fieldgate command line: dispatches to one module per sub-command.
import type { CliCommand, CliIo } from './cli/io.js';
import { devCommand } from './cli/dev-packages.js';
import { EXIT_USAGE, wantsHelp } from './cli/io.js';
import { applyServiceEnv } from './cli/service-env.js';
import { FIELDGATE_VERSION } from './core/version.js';

type Loader = () => Promise<CliCommand>;

const COMMANDS: Record<string, { summary: string; load: Loader }> = {
  demo: { summary: 'the embedded demo: cloud emulator + simulated devices + gateway (npm start)', load: async () => (await import('./cli/demo.js')).runDemo },
  run: { summary: 'run the gateway daemon for a site file', load: async () => (await import('./cli/run.js')).runRun },
  poll: { summary: 'poll every device of a site once and print a table', load: async () => (await import('./cli/poll.js')).runPoll },
  validate: { summary: 'check a site file; print every problem, or each device\'s read plan', load: async () => (await import('./cli/validate.js')).runValidate },
  read: { summary: 'read registers or bits from a unit, decoded', load: async () => (await import('./cli/read.js')).runRead },
  write: { summary: 'write one value to a unit and read it back', load: async () => (await import('./cli/write.js')).runWrite },
  scan: { summary: 'find answering unit ids (and baud rates) on a line', load: async () => (await import('./cli/scan.js')).runScan },
  profiles: { summary: 'list the device profiles, or show one profile\'s points', load: async () => (await import('./cli/profiles.js')).runProfiles },
  simulate: { summary: 'run simulated Modbus devices from a register map or a device profile', load: async () => devCommand('simulate', async () => (await import('@fieldgate/simulator/cli')).runSimulate) },
  emulator: { summary: 'run the local device-cloud emulator (HTTP A/B, MQTT, TCP streams)', load: async () => devCommand('emulator', async () => (await import('@fieldgate/emulator/cli')).runEmulator) },
  reload: { summary: 'make the running daemon reload its site file (checked first); waits for its answer', load: async () => (await import('./cli/reload.js')).runReload },
  status: { summary: 'show the running daemon\'s status as tables', load: async () => (await import('./cli/status.js')).runStatus },
  logs: { summary: 'show the service\'s journal, readable, by device and level (--follow)', load: async () => (await import('./cli/logs.js')).runLogs },
  web: { summary: 'the commissioning page: "web passwd" sets its password (hash in the env file)', load: async () => (await import('./cli/web.js')).runWeb },
};

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return [`fieldgate ${FIELDGATE_VERSION}: Modbus/serial to device-cloud edge gateway`, '', 'usage: fieldgate <command> [options]', '', ...lines, '', 'fieldgate <command> --help shows the options of a command.', ''].join('\n');
}

export async function main(argv: string[], io: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env }): Promise<number> {
  const [name, ...rest] = argv;
  // The package's wrapper: the service's environment files, so the command sees what the unit sees.
  if (io.env.FIELDGATE_ENV_FILES !== undefined) applyServiceEnv(io.env);
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
  // Every command answers --help (and -h), wherever it stands among the arguments.
  return run(wantsHelp(rest) ? ['--help'] : rest, io);
}
