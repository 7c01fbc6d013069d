// `fieldgate demo` (what `npm start` runs): the embedded demo, or a real site with --config.
import { parseArgs } from 'node:util';
import { importDevModule } from './dev-packages.js';
import { EXIT_UNAVAILABLE, EXIT_USAGE, type CliCommand } from './io.js';
import { runRun } from './run.js';

const USAGE = `usage: fieldgate demo [--once] [--duration S]     the embedded demo (npm start)
       fieldgate demo --config SITE.yaml              run a real site instead (or FIELDGATE_CONFIG)
`;

export const runDemo: CliCommand = async (args, io) => {
  let values;
  try {
    values = parseArgs({ args, options: { config: { type: 'string', short: 'c' }, once: { type: 'boolean' }, duration: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true }).values;
  } catch (err) {
    io.stderr.write(`fieldgate demo: ${(err as Error).message}\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (values.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  const site = values.config ?? io.env.FIELDGATE_CONFIG;
  if (site) return runRun(['--config', site], io);
  const durationS = values.duration === undefined ? undefined : Number(values.duration);
  if (durationS !== undefined && !(durationS > 0)) {
    io.stderr.write(`fieldgate demo: --duration must be a number of seconds\n${USAGE}`);
    return EXIT_USAGE;
  }
  const demo = await importDevModule('demo', io, () => import('../demo/demo.js'));
  if (demo === undefined) return EXIT_UNAVAILABLE;
  const abort = new AbortController();
  const stop = () => abort.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    return await demo.runDemoSession({ io, once: values.once ?? false, durationS, signal: abort.signal });
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
};
