// `fieldgate poll SITE --once`: one cycle of every device, printed as a table (no cloud needed).
import { parseArgs } from 'node:util';
import { silentLogger } from '../ops/log.js';
import { Bus } from '../field/modbus/bus.js';
import { createModbusTransport } from '../field/modbus/transport.js';
import { Poller, type SampleSink } from '../device/poller.js';
import { EXIT_CONFIG, EXIT_UNAVAILABLE, EXIT_USAGE, type CliCommand, wantsHelp } from './io.js';
import { loadSiteOrReport } from './site-loading.js';
import { formatTable } from './status.js';

const USAGE = 'usage: fieldgate poll SITE.yaml --once [--json]\n';

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
  const rows: Array<Array<string | number>> = [];
  const json: Record<string, unknown> = {};
  let failures = 0;
  const sink: SampleSink = { onSample: () => undefined, onDeviceState: () => undefined };
  for (const busConfig of config.site.buses) {
    const compiled = config.compiled.devices.filter((d) => d.config.bus === busConfig.name);
    const devices = compiled.map((d) => d.config);
    if (devices.length === 0) continue;
    const bus = new Bus({ config: busConfig, transportFactory: createModbusTransport, logger: silentLogger() });
    bus.start();
    const poller = new Poller({ bus, devices: compiled, sink, logger: silentLogger() });
    try {
      for (const device of devices) {
        const sample = await poller.pollOnce(device.name);
        json[device.name] = sample;
        for (const point of device.points) {
          const value = sample.values[point.id];
          const error = sample.errors.find((e) => e.points.includes(point.id));
          // No value and no error: the device holds the point's "not implemented" value.
          if (error) failures += 1;
          const shown = value !== undefined ? String(value) : error ? `ERROR ${error.message}` : 'absent (not implemented)';
          rows.push([device.name, point.id, `${point.table}:${point.address}`, point.type, shown]);
        }
      }
    } finally {
      await bus.stop();
    }
  }
  io.stdout.write(parsed.values.json ? `${JSON.stringify(json, null, 2)}\n` : `${formatTable(['DEVICE', 'POINT', 'ADDRESS', 'TYPE', 'VALUE'], rows)}\n`);
  return failures === 0 ? 0 : EXIT_UNAVAILABLE;
};
