// Pure Modbus slave core: one request PDU against a unit's memory -> one response PDU.
import type { Table } from 'fieldgate/workspace-kit';
import type { UnitMemory } from './memory.js';

export const EXCEPTION = {
  illegalFunction: 1,
  illegalAddress: 2,
  illegalValue: 3,
  deviceFailure: 4,
  busy: 6,
} as const;

/** What a request touches; used to match injected exceptions and for logs. */
export interface RequestScope {
  fc: number;
  table?: Table;
  address?: number;
  count?: number;
}

/** An exception fault: answer `code` instead of executing, optionally only for some requests. */
export interface InjectedException {
  code: number;
  table?: Table;
  /** With `count`: only requests overlapping [address, address + count). */
  address?: number;
  count?: number;
  functions?: number[];
}

export interface PduResult {
  response: Buffer;
  scope: RequestScope;
  /** Exception code when the response is an exception. */
  exception?: number;
  /** True when the request changed memory (the broadcast path needs no reply but must write). */
  wrote: boolean;
}

const READ_TABLE: Record<number, Table> = { 1: 'coil', 2: 'discrete', 3: 'holding', 4: 'input' };
const MAX_READ_BITS = 2000;
const MAX_READ_REGISTERS = 125;
const MAX_WRITE_BITS = 1968;
const MAX_WRITE_REGISTERS = 123;
const MAX_RW_WRITE_REGISTERS = 121;

export function exceptionPdu(fc: number, code: number): Buffer {
  return Buffer.from([(fc | 0x80) & 0xff, code & 0xff]);
}

/** Parse what a request addresses without executing it. */
export function describeRequest(pdu: Buffer): RequestScope {
  const fc = pdu.length > 0 ? pdu[0] : 0;
  const word = (offset: number) => (pdu.length >= offset + 2 ? pdu.readUInt16BE(offset) : undefined);
  switch (fc) {
    case 1: case 2: case 3: case 4:
      return { fc, table: READ_TABLE[fc], address: word(1), count: word(3) };
    case 5: return { fc, table: 'coil', address: word(1), count: 1 };
    case 6: case 22: return { fc, table: 'holding', address: word(1), count: 1 };
    case 15: return { fc, table: 'coil', address: word(1), count: word(3) };
    case 16: return { fc, table: 'holding', address: word(1), count: word(3) };
    case 23: return { fc, table: 'holding', address: word(1), count: word(3) };
    default: return { fc };
  }
}

function matchesInjected(fault: InjectedException, scope: RequestScope): boolean {
  if (fault.functions !== undefined && !fault.functions.includes(scope.fc)) return false;
  if (fault.table !== undefined && scope.table !== fault.table) return false;
  if (fault.address === undefined) return true;
  if (scope.address === undefined) return false;
  const end = fault.address + (fault.count ?? 1);
  const reqEnd = scope.address + Math.max(scope.count ?? 1, 1);
  return scope.address < end && fault.address < reqEnd;
}

export function handlePdu(memory: UnitMemory, pdu: Buffer, injected?: InjectedException): PduResult {
  const scope = describeRequest(pdu);
  const fail = (code: number): PduResult => ({ response: exceptionPdu(scope.fc, code), scope, exception: code, wrote: false });
  if (pdu.length === 0) return fail(EXCEPTION.illegalFunction);
  if (injected !== undefined && matchesInjected(injected, scope)) return fail(injected.code);
  const ok = (response: Buffer, wrote = false): PduResult => ({ response, scope, wrote });

  switch (scope.fc) {
    case 1: case 2: {
      if (pdu.length !== 5) return fail(EXCEPTION.illegalValue);
      const { address, count } = readArgs(pdu);
      if (count < 1 || count > MAX_READ_BITS) return fail(EXCEPTION.illegalValue);
      const bank = memory.table(READ_TABLE[scope.fc]);
      if (!bank.covers(address, count)) return fail(EXCEPTION.illegalAddress);
      const bytes = Math.ceil(count / 8);
      const out = Buffer.alloc(2 + bytes);
      out[0] = scope.fc;
      out[1] = bytes;
      for (let i = 0; i < count; i += 1) if (bank.get(address + i) !== 0) out[2 + (i >>> 3)] |= 1 << (i & 7);
      return ok(out);
    }
    case 3: case 4: {
      if (pdu.length !== 5) return fail(EXCEPTION.illegalValue);
      const { address, count } = readArgs(pdu);
      if (count < 1 || count > MAX_READ_REGISTERS) return fail(EXCEPTION.illegalValue);
      const bank = memory.table(READ_TABLE[scope.fc]);
      if (!bank.covers(address, count)) return fail(EXCEPTION.illegalAddress);
      const out = Buffer.allocUnsafe(2 + count * 2);
      out[0] = scope.fc;
      out[1] = count * 2;
      if (count === 1) out.writeUInt16BE(bank.getAlone(address), 2);
      else for (let i = 0; i < count; i += 1) out.writeUInt16BE(bank.get(address + i), 2 + i * 2);
      return ok(out);
    }
    case 5: {
      if (pdu.length !== 5) return fail(EXCEPTION.illegalValue);
      const address = pdu.readUInt16BE(1);
      const value = pdu.readUInt16BE(3);
      if (value !== 0xff00 && value !== 0x0000) return fail(EXCEPTION.illegalValue);
      if (!memory.coil.covers(address, 1)) return fail(EXCEPTION.illegalAddress);
      memory.coil.set(address, value === 0xff00 ? 1 : 0);
      return ok(Buffer.from(pdu), true);
    }
    case 6: {
      if (pdu.length !== 5) return fail(EXCEPTION.illegalValue);
      const address = pdu.readUInt16BE(1);
      if (!memory.holding.covers(address, 1)) return fail(EXCEPTION.illegalAddress);
      memory.holding.set(address, pdu.readUInt16BE(3));
      return ok(Buffer.from(pdu), true);
    }
    case 15: {
      if (pdu.length < 6) return fail(EXCEPTION.illegalValue);
      const { address, count } = readArgs(pdu);
      const bytes = pdu[5];
      if (count < 1 || count > MAX_WRITE_BITS || bytes !== Math.ceil(count / 8) || pdu.length !== 6 + bytes) {
        return fail(EXCEPTION.illegalValue);
      }
      if (!memory.coil.covers(address, count)) return fail(EXCEPTION.illegalAddress);
      for (let i = 0; i < count; i += 1) memory.coil.set(address + i, (pdu[6 + (i >>> 3)] >>> (i & 7)) & 1);
      return ok(pdu.subarray(0, 5), true);
    }
    case 16: {
      if (pdu.length < 6) return fail(EXCEPTION.illegalValue);
      const { address, count } = readArgs(pdu);
      const bytes = pdu[5];
      if (count < 1 || count > MAX_WRITE_REGISTERS || bytes !== count * 2 || pdu.length !== 6 + bytes) {
        return fail(EXCEPTION.illegalValue);
      }
      if (!memory.holding.covers(address, count)) return fail(EXCEPTION.illegalAddress);
      for (let i = 0; i < count; i += 1) memory.holding.set(address + i, pdu.readUInt16BE(6 + i * 2));
      return ok(Buffer.from(pdu.subarray(0, 5)), true);
    }
    case 22: {
      if (pdu.length !== 7) return fail(EXCEPTION.illegalValue);
      const address = pdu.readUInt16BE(1);
      if (!memory.holding.covers(address, 1)) return fail(EXCEPTION.illegalAddress);
      const andMask = pdu.readUInt16BE(3);
      const orMask = pdu.readUInt16BE(5);
      const current = memory.holding.get(address);
      memory.holding.set(address, ((current & andMask) | (orMask & ~andMask)) & 0xffff);
      return ok(Buffer.from(pdu), true);
    }
    case 23:
      return readWriteMultiple(memory, pdu, fail, ok);
    default:
      return fail(EXCEPTION.illegalFunction);
  }
}

function readArgs(pdu: Buffer): { address: number; count: number } {
  return { address: pdu.readUInt16BE(1), count: pdu.readUInt16BE(3) };
}

function readWriteMultiple(
  memory: UnitMemory,
  pdu: Buffer,
  fail: (code: number) => PduResult,
  ok: (response: Buffer, wrote?: boolean) => PduResult,
): PduResult {
  if (pdu.length < 10) return fail(EXCEPTION.illegalValue);
  const readAddress = pdu.readUInt16BE(1);
  const readCount = pdu.readUInt16BE(3);
  const writeAddress = pdu.readUInt16BE(5);
  const writeCount = pdu.readUInt16BE(7);
  const bytes = pdu[9];
  if (readCount < 1 || readCount > MAX_READ_REGISTERS || writeCount < 1 || writeCount > MAX_RW_WRITE_REGISTERS
    || bytes !== writeCount * 2 || pdu.length !== 10 + bytes) {
    return fail(EXCEPTION.illegalValue);
  }
  if (!memory.holding.covers(readAddress, readCount) || !memory.holding.covers(writeAddress, writeCount)) {
    return fail(EXCEPTION.illegalAddress);
  }
  // The standard executes the write before the read.
  for (let i = 0; i < writeCount; i += 1) memory.holding.set(writeAddress + i, pdu.readUInt16BE(10 + i * 2));
  const out = Buffer.allocUnsafe(2 + readCount * 2);
  out[0] = 23;
  out[1] = readCount * 2;
  for (let i = 0; i < readCount; i += 1) out.writeUInt16BE(memory.holding.get(readAddress + i), 2 + i * 2);
  return ok(out, true);
}
