// `fieldgate poll SITE --once`: one cycle of every device, printed as a table (no cloud needed).
import { parseArgs } from 'node:util';
import type { BusConfig, DeviceConfig } from '../core/config/site-types.js';
import { silentLogger } from '../ops/log.js';
import { Bus } from '../field/modbus/bus.js';
import { createModbusTransport } from '../field/modbus/transport.js';
import { Poller, type SampleSink } from '../device/poller.js';
import type { Sample } from '../device/poll-cycle.js';
import { EXIT_CONFIG, EXIT_UNAVAILABLE, EXIT_USAGE, type CliCommand, wantsHelp } from './io.js';
import { loadSiteOrReport } from './site-loading.js';
import { formatTable } from './status.js';
import { stateLockHolder } from './lock-holder.js';

const USAGE = `usage: fieldgate poll SITE.yaml --once [--json]

Reads every point of every device of the site once and prints a table (or, with --json, each
device's values and errors). A point the device says it does not implement (it holds its
"not implemented" value, or its scale factor does) is shown absent, never as a number. A device
whose profile declares identification is checked first: one that identifies as another model is
not read (one row, and a hint to \`fieldgate scan --identify\`).

A serial port another program holds (the fieldgate service polls it) gives one row per device,
and a line naming the service and how to stop it.

exit codes:
  0   every point read (absent points included)
  64  wrong arguments
  69  some point could not be read (no answer, refused, undecodable, another model): one line on stderr says how many
  78  the site file has problems (each printed on stderr)
`;

type Row = Array<string | number>;

/** The serial port is locked by another program (serialport's flock: "Cannot lock port"). */
const PORT_IN_USE = /Cannot lock port|Resource temporarily unavailable|EBUSY/;

/**
 * Who holds a serial port poll cannot lock: the daemon of the site's state directory (its lock,
 * from the kernel's table), or some other program.
 */
function portHolderHint(bus: BusConfig, stateDir: string): string {
  const path = busAddress(bus);
  const holder = stateLockHolder(stateDir);
  if ('pid' in holder) {
    return `bus ${bus.name}: ${path} is held by the fieldgate service (the daemon of ${stateDir}, PID ${holder.pid}): stop it first (sudo systemctl stop fieldgate), `
      + 'or read through it: `fieldgate status`, the page\'s Read / scan tools';
  }
  return `bus ${bus.name}: ${path} is in use by another program (no fieldgate daemon holds ${stateDir}): \`fuser ${path}\` shows who holds it`;
}

/** A bus whose port is held elsewhere: one row per device instead of one error per point. */
function portHeldRows(device: DeviceConfig, sample: Sample): { rows: Row[]; failed: number; hint?: string } | undefined {
  if (sample.errors.length === 0 || !sample.errors.every((e) => PORT_IN_USE.test(e.message))) return undefined;
  return { rows: [[device.name, `(all ${device.points.length} points)`, '', '', 'ERROR port in use']], failed: device.points.length };
}

/** "Illegal data address" (Modbus exception 2): the unit has no register there. */
function refusedAddress(error: Sample['errors'][number]): boolean {
  return error.kind === 'ModbusExceptionError' && /exception 2 \(/.test(error.message);
}

/** SunSpec-placed devices read scale factors or sit at the SunSpec bases (40000, 50000). */
function looksSunSpec(device: DeviceConfig): boolean {
  return device.points.some((p) => p.scaleFactor !== undefined || (p.table === 'holding' && [40000, 50000].some((base) => p.address >= base && p.address < base + 10000)));
}

function busAddress(bus: BusConfig): string {
  return 'host' in bus ? `${bus.host}:${bus.port}` : bus.path;
}

/** Rows of one device's sample; a device that refused every address gets one row and a hint. */
function deviceRows(device: DeviceConfig, sample: Sample, bus: BusConfig): { rows: Row[]; failed: number; hint?: string } {
  const failedPoints = device.points.filter((point) => sample.errors.some((e) => e.points.includes(point.id)));
  const otherModel = sample.errors.find((e) => e.kind === 'DeviceIdentityError');
  if (otherModel) {
    const hint = `${device.name}: ${otherModel.message}; \`fieldgate scan --identify --bus ${busAddress(bus)} --units ${device.unitId}\` names the profile it matches`;
    return { rows: [[device.name, `(all ${device.points.length} points)`, `${otherModel.table}:${otherModel.start}`, '', 'ERROR another model: not polled']], failed: device.points.length, hint };
  }
  if (device.points.length > 1 && failedPoints.length === device.points.length && sample.errors.every(refusedAddress)) {
    const first = Math.min(...device.points.map((p) => p.address));
    const where = `${device.points[0].table}:${first}`;
    const hint = looksSunSpec(device)
      ? `${device.name}: every address from ${where} was refused (Illegal data address): its SunSpec models are elsewhere; \`fieldgate scan --sunspec --bus ${busAddress(bus)} --units ${device.unitId}\` finds them`
      : `${device.name}: every address from ${where} was refused (Illegal data address): check the unit id and the profile or points`;
    return { rows: [[device.name, `(all ${device.points.length} points)`, where, '', 'ERROR Illegal data address']], failed: device.points.length, hint };
  }
  const rows = device.points.map((point): Row => {
    const value = sample.values[point.id];
    const error = sample.errors.find((e) => e.points.includes(point.id));
    const why = sample.absent?.[point.id];
    // No value and no error: the device holds the point's (or its scale factor's) "not implemented" value.
    const shown = value !== undefined ? String(value) : error ? `ERROR ${error.message}` : why ? `absent (not implemented: ${why})` : 'absent (not implemented)';
    return [device.name, point.id, `${point.table}:${point.address}`, point.type, shown];
  });
  return { rows, failed: failedPoints.length };
}

export const runPoll: CliCommand = async (args, io) => {
  if (wantsHelp(args)) {
    io.stdout.write(USAGE);
    return 0;
  }
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: { once: { type: 'boolean' }, json: { type: 'boolean' } }, strict: true });
    if (parsed.positionals.length !== 1) throw new Error('expected exactly one site file');
    if (!parsed.values.once) throw new Error('only --once is supported: `fieldgate run` polls continuously');
  } catch (err) {
    io.stderr.write(`fieldgate poll: ${(err as Error).message}\n${USAGE}`);
    return EXIT_USAGE;
  }
  const config = loadSiteOrReport(parsed.positionals[0], io, 'poll');
  if (!config) return EXIT_CONFIG;
  const rows: Row[] = [];
  const json: Record<string, unknown> = {};
  const hints: string[] = [];
  let failures = 0;
  let failedDevices = 0;
  const sink: SampleSink = { onSample: () => undefined, onDeviceState: () => undefined };
  for (const busConfig of config.site.buses) {
    const compiled = config.compiled.devices.filter((d) => d.config.bus === busConfig.name);
    const devices = compiled.map((d) => d.config);
    if (devices.length === 0) continue;
    const bus = new Bus({ config: busConfig, transportFactory: createModbusTransport, logger: silentLogger() });
    bus.start();
    const poller = new Poller({ bus, devices: compiled, sink, logger: silentLogger() });
    let held = false;
    try {
      for (const device of devices) {
        const sample = await poller.pollOnce(device.name);
        json[device.name] = sample;
        const inUse = busConfig.kind === 'rtu' ? portHeldRows(device, sample) : undefined;
        if (inUse && !held) hints.push(portHolderHint(busConfig, config.gateway.stateDir));
        held ||= inUse !== undefined;
        const shown = inUse ?? deviceRows(device, sample, busConfig);
        rows.push(...shown.rows);
        failures += shown.failed;
        if (shown.failed > 0) failedDevices += 1;
        if (shown.hint) hints.push(shown.hint);
      }
    } finally {
      await bus.stop();
    }
  }
  io.stdout.write(parsed.values.json ? `${JSON.stringify(json, null, 2)}\n` : `${formatTable(['DEVICE', 'POINT', 'ADDRESS', 'TYPE', 'VALUE'], rows)}\n`);
  if (failures === 0) return 0;
  // One plain line for the exit code (plus one hint per device that refused every address).
  for (const hint of hints) io.stderr.write(`fieldgate poll: ${hint}\n`);
  io.stderr.write(`fieldgate poll: ${failures} point(s) of ${failedDevices} device(s) could not be read (see the table)\n`);
  return EXIT_UNAVAILABLE;
};
