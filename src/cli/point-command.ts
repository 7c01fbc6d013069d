// What `fieldgate read` and `fieldgate write` share: their arguments (the bus and the point, and
// their own options) parsed into a bus and a selection or a usage error (exit 64), and one
// transport opened for the command and always closed, a field error explained (exit 69).
import type { BusConfig } from '../core/config/site-types.js';
import { createModbusTransport, type ModbusTransport } from '../field/modbus/transport.js';
import { BUS_OPTIONS, UsageError, busFromOptions, type BusOptionValues } from './bus-options.js';
import { explainFieldError } from './field-errors.js';
import { EXIT_UNAVAILABLE, EXIT_USAGE, type CliIo } from './io.js';
import { POINT_OPTIONS, pointFromOptions, type PointOptionValues, type PointSelection } from './point-options.js';

/** The options both commands take; each adds its own and parses them with parseArgs. */
export const POINT_COMMAND_OPTIONS = { ...BUS_OPTIONS, ...POINT_OPTIONS, help: { type: 'boolean', short: 'h' } } as const;

type CommandValues = BusOptionValues & PointOptionValues & { help?: boolean };

export interface PointCommand<V extends CommandValues> {
  values: V;
  bus: BusConfig;
  selection: PointSelection;
}

/**
 * The command's arguments (`parse`: parseArgs over POINT_COMMAND_OPTIONS and its own), or the exit
 * code when it ends here (help printed: 0; a usage error printed with what was wrong: 64).
 * `select` may refine the point and throw a UsageError.
 */
export function parsePointCommand<V extends CommandValues>(
  command: string, io: CliIo, help: string, parse: () => V, select: (values: V) => PointSelection = pointFromOptions,
): PointCommand<V> | number {
  let values: V;
  try {
    values = parse();
  } catch (err) {
    io.stderr.write(`fieldgate ${command}: ${(err as Error).message}\n\n${help}`);
    return EXIT_USAGE;
  }
  if (values.help) {
    io.stdout.write(help);
    return 0;
  }
  try {
    return { values, bus: busFromOptions(values), selection: select(values) };
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr.write(`fieldgate ${command}: ${err.message}\n`);
    return EXIT_USAGE;
  }
}

/**
 * Opens one transport to the bus, runs `work` on it and closes it whatever happens. A failure is
 * explained on stderr (exit 69), after `afterFailure` has had its say (a late answer, say).
 */
export async function onTransport(
  command: string, bus: BusConfig, io: CliIo, work: (transport: ModbusTransport) => Promise<number>,
  afterFailure?: (err: unknown) => Promise<void>,
): Promise<number> {
  const transport = createModbusTransport(bus);
  try {
    await transport.open();
    return await work(transport);
  } catch (err) {
    io.stderr.write(`fieldgate ${command}: ${explainFieldError(err, bus.kind)}\n`);
    await afterFailure?.(err);
    return EXIT_UNAVAILABLE;
  } finally {
    await transport.close().catch(() => undefined);
  }
}
