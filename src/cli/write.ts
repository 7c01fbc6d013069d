// `fieldgate write`: encode one value and write it, then read it back (commissioning on site).
import { parseArgs } from 'node:util';
import { perform } from '../field/modbus/bus-request.js';
import type { ModbusTransport } from '../field/modbus/transport.js';
import { compilePoint, type WriteOp } from '../core/points/codec.js';
import { BUS_OPTIONS_HELP, UsageError } from './bus-options.js';
import { EXIT_USAGE, type CliCommand } from './io.js';
import { POINT_OPTIONS_HELP, pointFromOptions } from './point-options.js';
import { POINT_COMMAND_OPTIONS, onTransport, parsePointCommand } from './point-command.js';
import { readOnce } from './read.js';

const HELP = `usage: fieldgate write --bus PATH|HOST:PORT --unit U --address A --type T --value V [options]

Encodes V as the given type (scale/offset applied in reverse), writes it (FC5/FC6, or FC15/FC16
with --multi or for multi-register types), reads the point back and prints what the device holds.

${BUS_OPTIONS_HELP}
${POINT_OPTIONS_HELP}
  --value V              the engineering value (true/false for coils and bits)
  --multi                always use FC15/FC16
`;

/** Performs one encoded write; a bit of a register is read, modified and written back. */
export async function performWrite(transport: ModbusTransport, unit: number, op: WriteOp, multi: boolean, timeoutMs: number): Promise<void> {
  switch (op.kind) {
    case 'coil':
      return multi ? transport.writeCoils(unit, op.address, [op.value], timeoutMs) : transport.writeCoil(unit, op.address, op.value, timeoutMs);
    case 'registers':
      return op.words.length === 1 && !multi
        ? transport.writeRegister(unit, op.address, op.words[0], timeoutMs)
        : transport.writeRegisters(unit, op.address, op.words, timeoutMs);
    case 'bit':
      // The same read-modify-write the gateway runs as one bus job.
      await perform(transport, unit, { kind: 'write-bit', address: op.address, bit: op.bit, value: op.value, forceMulti: multi }, timeoutMs);
      return;
  }
}

function parseValue(text: string): unknown {
  if (text === 'true') return true;
  if (text === 'false') return false;
  const n = Number(text);
  return text.trim() !== '' && Number.isFinite(n) ? n : text;
}

export const runWrite: CliCommand = async (args, io) => {
  const options = { ...POINT_COMMAND_OPTIONS, value: { type: 'string' }, multi: { type: 'boolean' } } as const;
  const parsed = parsePointCommand('write', io, HELP, () => parseArgs({ args, options, strict: true }).values, (values) => {
    const selection = pointFromOptions({ ...values, type: values.type ?? (values.table === 'coil' ? 'bool' : undefined) });
    if (!selection.point) throw new UsageError('--type is required');
    if (values.value === undefined) throw new UsageError('--value is required');
    return selection;
  });
  if (typeof parsed === 'number') return parsed;
  const { values, bus, selection } = parsed;
  const codec = compilePoint(selection.point!);
  const encoded = codec.encode(parseValue(values.value!));
  if (!encoded.ok) {
    io.stderr.write(`fieldgate write: ${encoded.error}\n`);
    return EXIT_USAGE;
  }
  return onTransport('write', bus, io, async (transport) => {
    await performWrite(transport, selection.unit, encoded.write, values.multi ?? false, bus.timeoutMs);
    const block = await readOnce(transport, selection.unit, selection.table, selection.address, selection.count, bus.timeoutMs);
    io.stdout.write(`wrote ${encoded.value}, device holds ${codec.decode(block)}\n`);
    return 0;
  });
};
