// `fieldgate read`: one Modbus read, decoded, for commissioning on site (no site file, no cloud).
import { parseArgs } from 'node:util';
import type { ModbusTransport } from '../field/modbus/transport.js';
import { compilePoint, nthPoint } from '../core/points/codec.js';
import { formatInterpretations, interpretRegisters } from '../core/points/interpret.js';
import type { Table } from '../core/points/types.js';
import { BUS_OPTIONS_HELP } from './bus-options.js';
import type { CliCommand } from './io.js';
import { POINT_OPTIONS_HELP, type PointSelection } from './point-options.js';
import { POINT_COMMAND_OPTIONS, onTransport, parsePointCommand } from './point-command.js';
import { ModbusTimeoutError } from '../field/modbus/errors.js';
import { LateReplies, lateListenMs, lateReplyHint, timed } from './answer-time.js';

const HELP = `usage: fieldgate read --bus PATH|HOST:PORT --unit U --address A [options]

Reads registers or bits once and prints them decoded. Without --type, registers are shown as hex
and as every 16/32/64-bit interpretation in every word/byte order, each row with its address.
With --type and --count N, N values of the type are read and printed as "ADDRESS: VALUE".
The answer time goes to stderr; on RTU, a reply that misses the timeout is still listened for
(up to 10 timeouts, at most 5 s) to tell how late the unit answers.

${BUS_OPTIONS_HELP}
${POINT_OPTIONS_HELP}
  --json                 print JSON instead of text
`;

export type ReadResult = { table: Table; start: number; words?: Uint16Array; bits?: boolean[] };

export async function readOnce(transport: ModbusTransport, unit: number, table: Table, start: number, count: number, timeoutMs: number): Promise<ReadResult> {
  switch (table) {
    case 'coil': return { table, start, bits: await transport.readCoils(unit, start, count, timeoutMs) };
    case 'discrete': return { table, start, bits: await transport.readDiscreteInputs(unit, start, count, timeoutMs) };
    case 'holding': return { table, start, words: await transport.readHoldingRegisters(unit, start, count, timeoutMs) };
    case 'input': return { table, start, words: await transport.readInputRegisters(unit, start, count, timeoutMs) };
  }
}

/** One value: just the value (as before); several: one "ADDRESS: VALUE" line each. */
function typedOutput(selection: PointSelection, block: ReadResult, raw: (number | boolean)[], json: boolean): string {
  const point = selection.point;
  if (!point) return '';
  const decoded = Array.from({ length: selection.values }, (_, i) => {
    const at = nthPoint(point, i);
    return { address: at.address, value: compilePoint(at).decode(block) };
  });
  if (decoded.length === 1) return json ? `${JSON.stringify({ value: decoded[0].value, raw })}\n` : `${String(decoded[0].value)}\n`;
  if (json) return `${JSON.stringify({ values: decoded, raw })}\n`;
  return `${decoded.map((d) => `${d.address}: ${String(d.value)}`).join('\n')}\n`;
}

export const runRead: CliCommand = async (args, io) => {
  const parsed = parsePointCommand('read', io, HELP, () => parseArgs({ args, options: { ...POINT_COMMAND_OPTIONS, json: { type: 'boolean' } }, strict: true }).values);
  if (typeof parsed === 'number') return parsed;
  const { values, bus, selection } = parsed;
  let late: LateReplies | undefined;
  return onTransport('read', bus, io, async (transport) => {
    late = new LateReplies(transport);
    const { value: block, answerMs } = await timed(() => readOnce(transport, selection.unit, selection.table, selection.address, selection.count, bus.timeoutMs));
    io.stderr.write(`unit ${selection.unit} answered in ${answerMs} ms (timeout ${bus.timeoutMs} ms)\n`);
    const raw = block.words ? Array.from(block.words) : (block.bits ?? []);
    if (selection.point) {
      io.stdout.write(typedOutput(selection, block, raw, values.json === true));
    } else if (block.bits) {
      const text = block.bits.map((b, i) => `${selection.address + i}: ${b ? 1 : 0}`).join('\n');
      io.stdout.write(values.json ? `${JSON.stringify({ raw })}\n` : `${text}\n`);
    } else {
      const rows = interpretRegisters(raw as number[], selection.address);
      io.stdout.write(values.json ? `${JSON.stringify({ raw, interpretations: rows })}\n` : `${formatInterpretations(rows)}\n`);
    }
    return 0;
  }, async (err) => {
    // On RTU a reply that missed the timeout is still listened for, to tell how late the unit answers.
    if (!(err instanceof ModbusTimeoutError) || bus.kind === 'tcp' || !late) return;
    const answeredAfterMs = await late.waitFor(selection.unit, lateListenMs(bus.timeoutMs));
    if (answeredAfterMs !== undefined) io.stderr.write(`fieldgate read: ${lateReplyHint(selection.unit, answeredAfterMs, bus.timeoutMs)}\n`);
  });
};
