// fieldgate simulate MAP: serve simulated Modbus devices over TCP, a serial port / pty, or RTU-over-TCP.
import { parseArgs } from 'node:util';
import { createLogger, LOG_LEVELS, type LevelWithSilent, EXIT_CONFIG, EXIT_UNAVAILABLE, EXIT_USAGE, type CliCommand, type CliIo } from 'fieldgate/workspace-kit';
import {
  SimMapError, DEFAULT_LINE, createPtyPair, lineTiming, loadSimMapFile, startSimulation,
  type LineSettings, type PtyPair, type Simulation,
} from './index.js';
import { validateLineSettings } from './timing.js';
import { loadProfiles } from 'fieldgate/workspace-kit';
import type { SimMap } from './map-file.js';
import { placeProfiles, profileUnit, siteDeviceBlock } from './profile-map.js';

const USAGE = `usage: fieldgate simulate MAP [options]
       fieldgate simulate --profile NAME [--profile NAME...] [--unit N] [options]
  MAP                     register map (YAML/JSON), e.g. config/sim/demo-meter.yaml
  --profile NAME          serve a device profile instead of a map: every point with a plausible value
                          (SunSpec profiles with the SunS marker at 40000 and the model chain)
  --unit N                unit id of the profile's device (default 1)
  --profile-dir DIR       a site's own profiles, as gateway.profileDirs (repeatable)
  --tcp [HOST:]PORT       Modbus TCP listener (default 127.0.0.1:5020 when nothing else is given; port 0 = any free port)
  --rtu PATH              Modbus RTU on a serial port (e.g. one end of a socat pty pair)
  --pty                   create a pty pair with socat, serve RTU on one end and print the other
  --rtu-over-tcp [HOST:]PORT  RTU frames on TCP (like a serial-to-Ethernet converter)
  --baud N                line speed for RTU (default 9600)
  --parity none|even|odd  (default even)
  --data-bits 7|8         (default 8)
  --stop-bits 1|2         (default 1)
  --baud-accurate         RTU replies only after the time the exchange would take on a real line
  --strict                with --baud-accurate: ignore requests sent less than t3.5 after the previous frame
  --echo                  RTU lines echo every request byte back before the reply (RS-485 local echo)
  --log-level LEVEL       trace|debug|info|warn|error|silent (default info; debug logs every request)
`;


class UsageError extends Error {}

export interface Endpoint {
  host: string;
  port: number;
}

/** "5020", "0.0.0.0:502", "[::1]:502" -> host and port. */
export function parseEndpoint(text: string, option: string): Endpoint {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(text) ?? /^()()(\d+)$/.exec(text);
  const port = match === null ? Number.NaN : Number(match[3]);
  if (match === null || !Number.isInteger(port) || port > 65535) {
    throw new UsageError(`--${option}: expected [HOST:]PORT with PORT 0..65535, got "${text}"`);
  }
  return { host: match[1] || match[2] || '127.0.0.1', port };
}

function parseLine(values: Record<string, string | string[] | boolean | undefined>): LineSettings {
  const line: LineSettings = {
    baud: values.baud === undefined ? DEFAULT_LINE.baud : Number(values.baud),
    parity: (values.parity ?? DEFAULT_LINE.parity) as LineSettings['parity'],
    dataBits: values['data-bits'] === undefined ? DEFAULT_LINE.dataBits : Number(values['data-bits']),
    stopBits: values['stop-bits'] === undefined ? DEFAULT_LINE.stopBits : Number(values['stop-bits']),
  };
  const problems = validateLineSettings(line);
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  return line;
}

/** The map of one unit serving `names`; throws SimMapError for unknown profiles or a bad unit id. */
function profileMap(names: string[], unitText: string | undefined, dirs: string[]): { map: SimMap; block: string } {
  const unit = unitText === undefined ? 1 : Number(unitText);
  const source = `profile ${names.join(' + ')}`;
  if (!Number.isInteger(unit) || unit < 1 || unit > 247) throw new SimMapError(source, [`--unit must be 1..247 (got "${unitText}")`]);
  const loaded = loadProfiles(dirs);
  const placed = placeProfiles(names, loaded.library);
  const problems = [...loaded.issues.map((issue) => `${issue.path}: ${issue.message}`), ...placed.problems];
  if (problems.length > 0) throw new SimMapError(source, problems);
  return { map: { units: [profileUnit(unit, placed.placements).spec] }, block: siteDeviceBlock(unit, placed.placements) };
}

/** Runs until `stop` aborts; the testable core of the command. */
export async function simulateUntil(args: string[], io: CliIo, stop: AbortSignal): Promise<number> {
  const say = (text: string) => io.stdout.write(`${text}\n`);
  let parsed;
  let line: LineSettings;
  let tcp: Endpoint | undefined;
  let rtuOverTcp: Endpoint | undefined;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        tcp: { type: 'string' }, rtu: { type: 'string' }, pty: { type: 'boolean' },
        'rtu-over-tcp': { type: 'string' }, baud: { type: 'string' }, parity: { type: 'string' },
        'data-bits': { type: 'string' }, 'stop-bits': { type: 'string' },
        'baud-accurate': { type: 'boolean' }, strict: { type: 'boolean' }, echo: { type: 'boolean' }, 'log-level': { type: 'string' }, help: { type: 'boolean', short: 'h' },
        profile: { type: 'string', multiple: true }, unit: { type: 'string' }, 'profile-dir': { type: 'string', multiple: true },
      },
    });
    if (parsed.values.help === true) {
      say(USAGE);
      return 0;
    }
    const profiles = parsed.values.profile ?? [];
    if (profiles.length > 0 && parsed.positionals.length > 0) throw new UsageError('give a register map or --profile, not both');
    if (profiles.length === 0 && parsed.positionals.length !== 1) throw new UsageError('exactly one register map file is needed');
    if (parsed.values.unit !== undefined && profiles.length === 0) throw new UsageError('--unit goes with --profile');
    if (parsed.values.rtu !== undefined && parsed.values.pty === true) throw new UsageError('--rtu and --pty exclude each other');
    if (parsed.values.strict === true && parsed.values['baud-accurate'] !== true) throw new UsageError('--strict needs --baud-accurate');
    const level = parsed.values['log-level'];
    if (level !== undefined && !(LOG_LEVELS as readonly string[]).includes(level)) throw new UsageError(`--log-level: one of ${LOG_LEVELS.join(', ')}`);
    line = parseLine(parsed.values);
    tcp = parsed.values.tcp === undefined ? undefined : parseEndpoint(parsed.values.tcp, 'tcp');
    rtuOverTcp = parsed.values['rtu-over-tcp'] === undefined ? undefined : parseEndpoint(parsed.values['rtu-over-tcp'], 'rtu-over-tcp');
    if (tcp === undefined && rtuOverTcp === undefined && parsed.values.rtu === undefined && parsed.values.pty !== true) {
      tcp = { host: '127.0.0.1', port: 5020 };
    }
  } catch (err) {
    io.stderr.write(`fieldgate simulate: ${(err as Error).message}\n${USAGE}`);
    return EXIT_USAGE;
  }
  const { values, positionals } = parsed;
  const mapPath = positionals[0] ?? `profile ${(values.profile ?? []).join(' + ')}`;
  const logLevel = (values['log-level'] ?? io.env.LOG_LEVEL ?? 'info') as LevelWithSilent;
  const logger = createLogger({ level: logLevel, destination: io.stderr }).child({ component: 'simulator' });

  let pty: PtyPair | undefined;
  let simulation: Simulation | undefined;
  try {
    const fromProfiles = values.profile ? profileMap(values.profile, values.unit, values['profile-dir'] ?? []) : undefined;
    const map = fromProfiles?.map ?? await loadSimMapFile(mapPath);
    if (values.pty === true) pty = await createPtyPair();
    const rtuPath = values.rtu ?? pty?.a;
    simulation = await startSimulation({
      map, logger, tcp, rtuOverTcp, line, baudAccurate: values['baud-accurate'] === true,
      strict: values.strict === true, echo: values.echo === true,
      rtu: rtuPath === undefined ? undefined : { path: rtuPath },
    });
    const names = map.units.map((u) => `${u.unit} (${u.name})`).join(', ');
    say(`simulating units ${names} from ${mapPath}`);
    const lineText = `${lineTiming(line).describe().split(':')[0]}${values['baud-accurate'] === true ? ', baud-accurate' : ''}`;
    if (simulation.tcp) say(`modbus tcp listening on ${simulation.tcp.host}:${simulation.tcp.port}`);
    if (simulation.rtu) say(`modbus rtu on ${simulation.rtu.path} at ${lineText}`);
    if (pty) say(`connect the master to ${pty.b}`);
    if (fromProfiles) say(`site-file device block:\n${fromProfiles.block}`);
    if (simulation.rtuOverTcp) say(`modbus rtu-over-tcp listening on ${simulation.rtuOverTcp.host}:${simulation.rtuOverTcp.port} at ${lineText}`);
    say('press Ctrl-C to stop');
  } catch (err) {
    await simulation?.close();
    await pty?.close();
    if (err instanceof SimMapError) {
      io.stderr.write(`fieldgate simulate: ${err.message}\n`);
      return EXIT_CONFIG;
    }
    io.stderr.write(`fieldgate simulate: ${(err as Error).message}\n`);
    return EXIT_UNAVAILABLE;
  }

  await new Promise<void>((resolve) => {
    if (stop.aborted) resolve();
    else stop.addEventListener('abort', () => resolve(), { once: true });
  });
  await simulation.close();
  await pty?.close();
  say('simulator stopped');
  return 0;
}

export const runSimulate: CliCommand = async (args, io) => {
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await simulateUntil(args, io, controller.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
};
