// How a Bus performs what it is asked (its shapes in bus-types.ts): the argument checks done before
// anything is queued, the wire shapes, the transactions, and the job kept for each request.
import type { Table } from '../../core/points/types.js';
import type { BusConfig } from '../../core/config/site-types.js';
import { BUS_DEFAULTS } from '../../core/config/buses.js';
import type { Job, Operation, OperationResult, Priority, RequestOptions } from './bus-types.js';
import { isBitTable } from '../../core/points/types.js';
import { InvalidRequestError, RequestCancelledError } from './errors.js';
import type { ModbusTransport } from './transport.js';
import type { ReplyShape } from './transport-types.js';
import type { ReadBlock } from '../../core/points/codec.js';
import { broadcastFrame } from '../../core/modbus/broadcast-frame.js';

export type { Operation, OperationResult, Priority, RequestOptions, WriteOptions } from './bus-types.js';

/** Whether the operation is addressed to one unit that answers it (not raw bytes, not a broadcast). */
export function addressesUnit(op: Operation): boolean {
  return op.kind !== 'raw' && op.kind !== 'broadcast';
}

/** Longest turnaround a broadcast may hold the line (ms). */
export const MAX_BROADCAST_TURNAROUND_MS = 10_000;


/** Modbus limits: 125 registers / 2000 bits per read, 123 registers / 1968 coils per write. */
const MAX_READ_REGISTERS = 125;
const MAX_READ_BITS = 2000;
const MAX_WRITE_REGISTERS = 123;
const MAX_WRITE_COILS = 1968;

function checkInteger(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new InvalidRequestError(`${name} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
}

/** Raw stream bytes: within what one exchange may put on the line. */
const MAX_RAW_REQUEST_BYTES = 65536;

export function validateOperation(unit: number, op: Operation): void {
  checkInteger('unit', unit, 0, 255);
  if (op.kind === 'raw') {
    checkInteger('raw request bytes', op.data.length, 1, MAX_RAW_REQUEST_BYTES);
    return;
  }
  if (op.kind === 'broadcast') {
    checkInteger('broadcast unit', unit, 0, 0);
    checkInteger('broadcast turnaround (ms)', op.turnaroundMs, 0, MAX_BROADCAST_TURNAROUND_MS);
    validateOperation(0, op.write);
    return;
  }
  if (op.kind === 'read') {
    const max = isBitTable(op.table) ? MAX_READ_BITS : MAX_READ_REGISTERS;
    checkInteger('start address', op.start, 0, 65535);
    checkInteger(`count (${op.table})`, op.count, 1, max);
    if (op.start + op.count > 65536) throw new InvalidRequestError('read runs past address 65535');
    return;
  }
  checkInteger('address', op.address, 0, 65535);
  if (op.kind === 'write-bit') {
    checkInteger('bit', op.bit, 0, 15);
    return;
  }
  const max = op.kind === 'write-registers' ? MAX_WRITE_REGISTERS : MAX_WRITE_COILS;
  checkInteger('number of values', op.values.length, 1, max);
  if (op.address + op.values.length > 65536) throw new InvalidRequestError('write runs past address 65535');
  if (op.kind === 'write-registers') {
    op.values.forEach((value, index) => checkInteger(`register value [${index}]`, value, 0, 65535));
  }
}

/** The function code of a read of `table`. */
const READ_FUNCTION: Record<Table, number> = { coil: 1, discrete: 2, holding: 3, input: 4 };

/** What the operation puts on the wire (function and quantity of each request); none for raw bytes. */
export function wireShapes(op: Operation): ReplyShape[] {
  switch (op.kind) {
    case 'read': return [{ functionCode: READ_FUNCTION[op.table], quantity: op.count, address: op.start }];
    case 'write-registers': return [{ functionCode: op.values.length === 1 && !op.forceMulti ? 6 : 16, quantity: op.values.length }];
    case 'write-coils': return [{ functionCode: op.values.length === 1 && !op.forceMulti ? 5 : 15, quantity: op.values.length }];
    case 'write-bit': return [{ functionCode: 3, quantity: 1 }, { functionCode: op.forceMulti ? 16 : 6, quantity: 1 }];
    case 'raw': return [];
    case 'broadcast': return [];
  }
}

/** Between two transactions of one request: its owner gone, nothing more of it goes on the line. */
function checkOwner(signal: AbortSignal | undefined, unit: number): void {
  if (signal?.aborted === true) throw new RequestCancelledError(unit);
}

/**
 * Performs one operation on the transport (one Modbus transaction; a read with `pieceCount` as
 * reads of at most that many registers or bits, one after the other, joined). `signal`: the
 * owner's; once aborted, a transaction under way finishes but the next is not sent.
 */
export async function perform(
  transport: ModbusTransport, unit: number, op: Operation, timeoutMs: number, pieceCount?: number, signal?: AbortSignal,
): Promise<OperationResult> {
  if (op.kind === 'read' && pieceCount !== undefined && pieceCount < op.count) {
    const pieces: ReadBlock<Uint16Array>[] = [];
    for (let start = op.start; start < op.start + op.count; start += pieceCount) {
      if (start > op.start) checkOwner(signal, unit);
      const count = Math.min(pieceCount, op.start + op.count - start);
      pieces.push(await performRead(transport, unit, { ...op, start, count }, timeoutMs));
    }
    return joinBlocks(op.table, op.start, pieces);
  }
  switch (op.kind) {
    case 'read':
      return performRead(transport, unit, op, timeoutMs);
    case 'write-registers':
      if (op.values.length === 1 && !op.forceMulti) {
        await transport.writeRegister(unit, op.address, op.values[0] as number, timeoutMs);
      } else {
        await transport.writeRegisters(unit, op.address, op.values, timeoutMs);
      }
      return undefined;
    case 'write-coils':
      if (op.values.length === 1 && !op.forceMulti) {
        await transport.writeCoil(unit, op.address, op.values[0] as boolean, timeoutMs);
      } else {
        await transport.writeCoils(unit, op.address, op.values, timeoutMs);
      }
      return undefined;
    case 'write-bit': {
      const [current = 0] = await transport.readHoldingRegisters(unit, op.address, 1, timeoutMs);
      checkOwner(signal, unit);
      const next = op.value ? (current | (1 << op.bit)) & 0xffff : current & ~(1 << op.bit) & 0xffff;
      if (op.forceMulti) await transport.writeRegisters(unit, op.address, [next], timeoutMs);
      else await transport.writeRegister(unit, op.address, next, timeoutMs);
      return undefined;
    }
    case 'raw':
      return transport.exchangeRaw(op.data, op.window);
    case 'broadcast':
      if (!transport.broadcast) throw new InvalidRequestError(`${transport.target} cannot broadcast`);
      await transport.broadcast(broadcastFrame(op.write), op.turnaroundMs);
      return undefined;
  }
  return undefined;
}

async function performRead(transport: ModbusTransport, unit: number, op: Extract<Operation, { kind: 'read' }>,
  timeoutMs: number): Promise<ReadBlock<Uint16Array>> {
  switch (op.table) {
    case 'coil':
      return { table: op.table, start: op.start, bits: await transport.readCoils(unit, op.start, op.count, timeoutMs) };
    case 'discrete':
      return { table: op.table, start: op.start, bits: await transport.readDiscreteInputs(unit, op.start, op.count, timeoutMs) };
    case 'holding':
      return { table: op.table, start: op.start, words: await transport.readHoldingRegisters(unit, op.start, op.count, timeoutMs) };
    case 'input':
      return { table: op.table, start: op.start, words: await transport.readInputRegisters(unit, op.start, op.count, timeoutMs) };
  }
}

function joinBlocks(table: Table, start: number, pieces: readonly ReadBlock<Uint16Array>[]): ReadBlock<Uint16Array> {
  if (isBitTable(table)) return { table, start, bits: pieces.flatMap((p) => p.bits ?? []) };
  const words = new Uint16Array(pieces.reduce((n, p) => n + (p.words?.length ?? 0), 0));
  let at = 0;
  for (const piece of pieces) {
    words.set(piece.words ?? [], at);
    at += piece.words?.length ?? 0;
  }
  return { table, start, words };
}

/** Transactions an operation takes: a bit write reads and writes, a split read one per piece. */
export function transactionsOf(op: Operation, pieceCount: number | undefined): number {
  if (op.kind === 'write-bit') return 2;
  if (op.kind === 'read' && pieceCount !== undefined) return Math.ceil(op.count / pieceCount);
  return 1;
}

/**
 * A queued request. Cloud work (writes, their read-backs, cloud reads: high priority) may wait for
 * a guarded or cooling unit up to `writes.maxWaitMs`; polls and raw exchanges do not.
 */
export function newJob(unit: number, op: Operation, priority: Priority, options: RequestOptions, config: BusConfig, now: number,
  resolve: Job['resolve'], reject: Job['reject']): Job {
  const job: Job = {
    unit, op, priority, timeoutMs: options.timeoutMs ?? config.timeoutMs, resolve, reject, busyAttempts: 0, timeoutRepeats: 0,
    ...(op.kind === 'read' ? { repeatShape: { functionCode: READ_FUNCTION[op.table], quantity: op.count, address: op.start } } : {}),
    ...(options.lengthProbe === true && op.kind === 'read' ? { lengthProbe: true } : {}),
    ...(options.onStart ? { onStart: options.onStart } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.queueDeadlineMs !== undefined ? { expiresAt: now + options.queueDeadlineMs, queueDeadlineMs: options.queueDeadlineMs } : {}),
  };
  const maxWaitMs = priority === 'high' ? (options.maxWaitMs ?? config.writes?.maxWaitMs ?? BUS_DEFAULTS.writes.maxWaitMs) : 0;
  if (maxWaitMs > 0 && addressesUnit(op)) {
    job.queuedAt = now;
    job.waitUntil = now + maxWaitMs;
  }
  return job;
}
