// `fieldgate demo` (what `npm start` runs): the embedded demo, or a real site with --config.
import { parseArgs } from 'node:util';
import { importDevModule } from './dev-packages.js';
import { EXIT_CONFIG, EXIT_UNAVAILABLE, EXIT_USAGE, type CliCommand, type CliIo } from './io.js';
import { runRun } from './run.js';
import { releaseHungUpTerminal } from './hung-up-terminal.js';

const USAGE = `usage: fieldgate demo [--once] [--duration S] [--health-port N]     the embedded demo (npm start)
       fieldgate demo --config SITE.yaml              run a real site instead (or FIELDGATE_CONFIG)
  --health-port N   health endpoint port (default 9180, or FIELDGATE_HEALTH_PORT; 0 = any free port)
Ctrl-C, SIGTERM or closing the terminal (SIGHUP) stops it and removes what it started.
`;

/** The signals that end the demo: Ctrl-C, a kill or systemd, and the terminal closing. */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function portFrom(text: string): number | undefined {
  const port = /^\d{1,5}$/.test(text.trim()) ? Number(text) : Number.NaN;
  return Number.isInteger(port) && port <= 65535 ? port : undefined;
}

export const runDemo: CliCommand = async (args, io) => {
  let values;
  try {
    values = parseArgs({ args, options: { config: { type: 'string', short: 'c' }, once: { type: 'boolean' }, duration: { type: 'string' }, 'health-port': { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true }).values;
  } catch (err) {
    io.stderr.write(`fieldgate demo: ${(err as Error).message}\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (values.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  const portText = values['health-port'];
  const healthPort = portText === undefined ? undefined : portFrom(portText);
  if (portText !== undefined && healthPort === undefined) {
    io.stderr.write(`fieldgate demo: --health-port: "${portText.slice(0, 20)}" is not a port number 0..65535\n${USAGE}`);
    return EXIT_USAGE;
  }
  const site = values.config ?? io.env.FIELDGATE_CONFIG;
  // A real site's port comes from its site file and environment, as for `fieldgate run`.
  if (site) return runRun(['--config', site], portText === undefined ? io : { ...io, env: { ...io.env, FIELDGATE_HEALTH_PORT: portText } });
  const envPort = io.env.FIELDGATE_HEALTH_PORT === undefined ? undefined : portFrom(io.env.FIELDGATE_HEALTH_PORT);
  if (io.env.FIELDGATE_HEALTH_PORT !== undefined && envPort === undefined) {
    io.stderr.write(`fieldgate demo: FIELDGATE_HEALTH_PORT: "${io.env.FIELDGATE_HEALTH_PORT.slice(0, 20)}" is not a port number 0..65535\n`);
    return EXIT_CONFIG;
  }
  const durationS = values.duration === undefined ? undefined : Number(values.duration);
  if (durationS !== undefined && !(durationS > 0)) {
    io.stderr.write(`fieldgate demo: --duration must be a number of seconds\n${USAGE}`);
    return EXIT_USAGE;
  }
  const once = values.once ?? false;
  return untilStopped(io, async (signal) => {
    const demo = await importDevModule('demo', io, () => import('../demo/demo.js'));
    if (demo === undefined) return EXIT_UNAVAILABLE;
    return demo.runDemoSession({ io, once, durationS, signal, healthPort: healthPort ?? envPort });
  });
};

/** Runs the embedded demo with every stop signal turned into an abort, so each ends in its clean-up. */
async function untilStopped(io: CliIo, session: (signal: AbortSignal) => Promise<number>): Promise<number> {
  const abort = new AbortController();
  const stop = (signal: NodeJS.Signals) => abort.abort(signal);
  // A second Ctrl-C or SIGTERM kills at once (clean-up stuck); a closing window sends SIGHUP more
  // than once (the shell's, the kernel's), so every SIGHUP is taken until the clean-up is done.
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  process.on('SIGHUP', stop);
  // After SIGHUP the terminal is gone and writing to it fails (EIO): that must not cut the clean-up short.
  const ignoreClosedTerminal = (): void => undefined;
  io.stdout.on('error', ignoreClosedTerminal);
  io.stderr.on('error', ignoreClosedTerminal);
  try {
    return await session(abort.signal);
  } finally {
    for (const signal of STOP_SIGNALS) process.off(signal, stop);
    io.stdout.off('error', ignoreClosedTerminal);
    io.stderr.off('error', ignoreClosedTerminal);
    if (io.stdout === process.stdout) releaseHungUpTerminal();
  }
}
