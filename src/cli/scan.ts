// `fieldgate scan`: which unit ids answer on a line, and at which baud rate (commissioning on site).
import { parseArgs } from 'node:util';
import type { BusConfig } from '../core/config/site-types.js';
import { LineEchoError, ModbusExceptionError, PortOpenError } from '../field/modbus/errors.js';
import { type ModbusTransport, createModbusTransport } from '../field/modbus/transport.js';
import { BUS_OPTIONS, BUS_OPTIONS_HELP, UsageError, busFromOptions } from './bus-options.js';
import { explainFieldError } from './field-errors.js';
import { EXIT_UNAVAILABLE, EXIT_USAGE, type CliCommand, type CliIo } from './io.js';
import { readOnce } from './read.js';
import { LateReplies, lateReplyHint, timed } from './answer-time.js';
import { describeSunSpecUnit, scanSunSpecUnit } from './scan-sunspec.js';
import { loadProfiles } from '../ops/profile-library.js';
import { DEFAULT_PROFILE_DIR } from '../core/config/schema.js';
import { isPseudoTerminal } from './pty-check.js';
import { runIdentifyScan } from './scan-identify-run.js';
import { openScanTransport } from './scan-transport.js';

const HELP = `usage: fieldgate scan --bus PATH|HOST:PORT [--units 1-247] [--bauds 9600,19200|common] [options]
       fieldgate scan --sunspec --bus PATH|HOST:PORT --units LIST [--bus-name NAME] [options]
       fieldgate scan --identify --bus PATH|HOST:PORT --units LIST [--profile-dir DIR...] [options]

Probes each unit id with one read; a normal reply or a Modbus exception both prove a unit is there.
Each is shown with its answer time; on RTU a reply that comes after the timeout still proves the
unit, and says how late it answers. On a serial line, --bauds tries each speed in turn. A
pseudo-terminal (a socat pair, the simulator's --pty) has no line speed: every rate answers alike,
so there it scans once and says so.
A line that echoes each request (an RS-485 adapter's local echo) is noticed and scanned again with
the echo stripped: set echo: true on that bus then.
With --sunspec, looks for the SunS marker at 40000, 50000 and 0, walks the model chain, prints
each model (id, address, length) and a site-file device block naming the matching profiles.
With --identify, reads the identification registers the profiles declare (each distinct register
once per unit; a unit silent at the first read is not asked again) and names the profiles whose
model the answers show.

${BUS_OPTIONS_HELP}
  --units LIST           ids and ranges, e.g. 1-10,17 (default 1-247)
  --bauds LIST|common    serial speeds to try (common = 9600,19200,38400,57600,115200,4800,2400)
  --probe-table holding|input   --probe-address A   what to read (default holding 0)
  --sunspec              SunSpec discovery (see above); --bus-name NAME is the bus name the block uses
  --identify             which profile each unit is (see above); --profile-dir DIR adds a site's
                         profiles, as gateway.profileDirs (repeatable; default ${DEFAULT_PROFILE_DIR})
  (the --timeout default is 200 ms here)

exit codes: 0 a unit answered (--sunspec: a unit has the SunS marker; --identify: a unit matches a
profile); 64 wrong arguments; 69 no unit answered (--sunspec: none has the marker; --identify: none
matches) or the port could not be opened; 78 a profile could not be read (--identify); each
non-zero exit says why in one line on stderr.
`;

const COMMON_BAUDS = [9600, 19200, 38400, 57600, 115200, 4800, 2400];

/** "1-10,17" -> [1..10, 17]; throws UsageError on anything else (pure). */
export function parseUnitList(text: string): number[] {
  const units = new Set<number>();
  for (const part of text.split(',')) {
    const m = /^\s*(\d{1,3})\s*(?:-\s*(\d{1,3})\s*)?$/.exec(part);
    const from = m ? Number(m[1]) : NaN;
    const to = m?.[2] !== undefined ? Number(m[2]) : from;
    if (!m || from > to || to > 255) throw new UsageError(`--units: "${part}" is not a unit id or range within 0-255`);
    for (let u = from; u <= to; u += 1) units.add(u);
  }
  return [...units].sort((a, b) => a - b);
}

export function parseBaudList(text: string | undefined, single: number): number[] {
  if (text === undefined) return [single];
  if (text === 'common') return COMMON_BAUDS;
  return text.split(',').map((t) => {
    const n = Number(t);
    if (!Number.isInteger(n) || n < 50 || n > 4_000_000) throw new UsageError(`--bauds: "${t}" is not a baud rate`);
    return n;
  });
}

export interface ScanHit {
  unit: number;
  baudRate?: number;
  answer: 'reply' | 'exception' | 'late';
  detail: string;
  /** Found with the line's local echo stripped (set echo: true on this bus). */
  echo?: true;
  /** Request to reply (ms); for 'late', after the timeout. */
  answerMs: number;
}

function describeHit(h: ScanHit, timeoutMs: number): string {
  const where = `unit ${h.unit}${h.baudRate ? ` at ${h.baudRate} baud` : ''}${h.echo ? ' (echo: true)' : ''}`;
  if (h.answer === 'late') return `${where}: ${lateReplyHint(h.unit, h.answerMs, timeoutMs).replace(/^unit \d+ /, '')}`;
  return `${where}: ${h.answer === 'reply' ? 'answered' : `answered with exception (${h.detail})`} in ${h.answerMs} ms`;
}

const echoFlag = (bus: BusConfig): { echo?: true } => (bus.kind !== 'tcp' && bus.echo === true ? { echo: true } : {});

export const runScan: CliCommand = async (args, io) => {
  let values;
  try {
    values = parseArgs({
      args,
      options: { ...BUS_OPTIONS, units: { type: 'string' }, bauds: { type: 'string' }, 'probe-table': { type: 'string' }, 'probe-address': { type: 'string' }, json: { type: 'boolean' }, sunspec: { type: 'boolean' }, identify: { type: 'boolean' }, 'profile-dir': { type: 'string', multiple: true }, 'bus-name': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }).values;
  } catch (err) {
    io.stderr.write(`fieldgate scan: ${(err as Error).message}\n\n${HELP}`);
    return EXIT_USAGE;
  }
  if (values.help) {
    io.stdout.write(HELP);
    return 0;
  }
  let units: number[];
  let buses: BusConfig[];
  let ptyLine = false;
  const table = values['probe-table'] === 'input' ? 'input' : 'holding';
  const address = Number(values['probe-address'] ?? 0);
  try {
    units = parseUnitList(values.units ?? '1-247');
    const first = busFromOptions({ ...values, timeout: values.timeout ?? '200' });
    buses = first.kind === 'rtu'
      ? parseBaudList(values.bauds, first.baudRate).map((baud) => busFromOptions({ ...values, timeout: values.timeout ?? '200' }, baud))
      : [first];
    if (first.kind === 'rtu' && buses.length > 1 && isPseudoTerminal(first.path)) {
      io.stderr.write(`fieldgate scan: ${first.path} is a pseudo-terminal (pty): it has no line speed, so every baud rate reaches the unit and --bauds cannot tell them apart; scanning once, units are listed without a baud rate\n`);
      buses = [first];
      ptyLine = true;
    }
    if (!Number.isInteger(address) || address < 0 || address > 65535) throw new UsageError('--probe-address must be 0-65535');
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr.write(`fieldgate scan: ${err.message}\n`);
    return EXIT_USAGE;
  }
  if (values.sunspec && values.identify) {
    io.stderr.write('fieldgate scan: --sunspec and --identify are two scans: choose one\n');
    return EXIT_USAGE;
  }
  if (values.sunspec) return runSunSpecScan(buses[0], units, values['bus-name'] ?? 'bus1', io);
  if (values.identify) return runIdentifyScan(buses[0], units, values['profile-dir'] ?? [DEFAULT_PROFILE_DIR], io);
  const hits: ScanHit[] = [];
  let echoNoticed = false;
  for (let bus of buses) {
    const baudRate = bus.kind === 'rtu' && !ptyLine ? bus.baudRate : undefined;
    const label = bus.kind !== 'rtu' ? `${bus.host}:${bus.port}` : ptyLine ? 'pty' : `${bus.baudRate} ${bus.dataBits}${bus.parity[0].toUpperCase()}${bus.stopBits}`;
    let transport: ModbusTransport = createModbusTransport(bus);
    let late = new LateReplies(transport);
    try {
      await transport.open();
    } catch (err) {
      io.stderr.write(`fieldgate scan: ${explainFieldError(err, bus.kind)}\n`);
      if (err instanceof PortOpenError) return EXIT_UNAVAILABLE;
      continue;
    }
    try {
      for (let i = 0; i < units.length; i += 1) {
        const unit = units[i] as number;
        io.stderr.write(`\rscanning ${label}: unit ${unit} (${i + 1}/${units.length}), found ${hits.length}   `);
        const started = performance.now();
        try {
          const { answerMs } = await timed(() => readOnce(transport, unit, table, address, 1, bus.timeoutMs));
          hits.push({ unit, baudRate, answer: 'reply', detail: 'answered', answerMs, ...echoFlag(bus) });
        } catch (err) {
          const answerMs = Math.round(performance.now() - started);
          if (err instanceof ModbusExceptionError) hits.push({ unit, baudRate, answer: 'exception', detail: err.exceptionName, answerMs, ...echoFlag(bus) });
          if (err instanceof LineEchoError && err.problem === 'echoes' && bus.kind !== 'tcp' && bus.echo !== true) {
            // Try the other setting: this unit again, and the rest, with the echo stripped.
            echoNoticed = true;
            bus = { ...bus, echo: true };
            await transport.close().catch(() => undefined);
            transport = createModbusTransport(bus);
            late = new LateReplies(transport);
            const reopened = await transport.open().then(() => true, (openErr: unknown) => {
              io.stderr.write(`fieldgate scan: ${explainFieldError(openErr, bus.kind)}\n`);
              return false;
            });
            if (!reopened) return EXIT_UNAVAILABLE;
            i -= 1;
          }
        }
      }
      for (const [unit, answerMs] of late.units) hits.push({ unit, baudRate, answer: 'late', detail: 'answered after the timeout', answerMs });
      hits.sort((a, b) => a.unit - b.unit);
    } finally {
      await transport.close().catch(() => undefined);
    }
    // A line answers at one speed: once units are found, slower guesses are pointless.
    if (hits.length > 0) break;
  }
  io.stderr.write('\n');
  if (echoNoticed) io.stderr.write('the line echoes requests: set echo: true on this bus (scanned with the echo stripped)\n');
  if (values.json) io.stdout.write(`${JSON.stringify(hits)}\n`);
  else if (hits.length === 0) io.stdout.write('no unit answered\n');
  else for (const h of hits) io.stdout.write(`${describeHit(h, buses[0]?.timeoutMs ?? 0)}\n`);
  if (hits.length > 0) return 0;
  io.stderr.write(`fieldgate scan: no unit answered (${units.length} unit id(s) tried)\n`);
  return EXIT_UNAVAILABLE;
};

async function runSunSpecScan(bus: BusConfig, units: readonly number[], busName: string, io: CliIo): Promise<number> {
  const transport = await openScanTransport(bus, io);
  if (!transport) return EXIT_UNAVAILABLE;
  const library = loadProfiles([DEFAULT_PROFILE_DIR]).library;
  let found = 0;
  try {
    for (const unit of units) {
      const result = await scanSunSpecUnit(transport, unit, bus.timeoutMs);
      if (result.chain.found) found += 1;
      io.stdout.write(describeSunSpecUnit(result, library, busName));
    }
  } finally {
    await transport.close().catch(() => undefined);
  }
  if (found > 0) return 0;
  io.stderr.write(`fieldgate scan: no SunSpec marker on any of the ${units.length} unit(s) scanned\n`);
  return EXIT_UNAVAILABLE;
}
