// Injectable unit faults and the pure decision of what a faulty unit does with one request.
import { TABLES, type Table } from 'fieldgate/workspace-kit';
import type { InjectedException } from './pdu.js';

export interface DisappearFault {
  /** Stay present this long after the fault is set (default 0: vanish at once). */
  afterMs?: number;
  /** Stay silent this long, then answer again (default: until cleared). */
  forMs?: number;
  /** Repeat the after/for cycle with this period (needs forMs). */
  everyMs?: number;
}

export interface UnitFault {
  /** Answer this exception code instead of executing (optionally only some requests). */
  exception?: InjectedException;
  /** Never answer. */
  timeout?: boolean;
  /** Delay every reply by this many ms. */
  slowMs?: number;
  /** Stop answering for a while (or until cleared), then come back. */
  disappear?: DisappearFault | true;
  /** Reply with a corrupted CRC: true = always, a number in 0..1 = that fraction of replies. */
  garble?: boolean | number;
  /**
   * Off-by-N register reads (FC3/FC4): the reply carries this many registers more (or, negative,
   * fewer; at least one) than asked, with a byte count and CRC consistent with what it carries.
   */
  extraRegisters?: number;
}

export interface ActiveFault {
  fault: UnitFault;
  /** When the fault was set, ms on the simulator clock. */
  sinceMs: number;
}

export type FaultAction =
  | { answer: false; reason: 'timeout' | 'disappeared' }
  | { answer: true; delayMs: number; garble: boolean; exception?: InjectedException; extraRegisters: number };

export const NO_FAULT_ACTION: FaultAction = { answer: true, delayMs: 0, garble: false, extraRegisters: 0 };

/** A register-read reply PDU re-sized by `extra` registers (byte count adjusted); other PDUs unchanged. */
export function resizeReadReply(pdu: Buffer, extra: number): Buffer {
  const code = pdu[0];
  if (extra === 0 || (code !== 3 && code !== 4) || pdu.length < 4) return pdu;
  const registers = Math.max(1, Math.min(125, (pdu.length - 2) / 2 + extra));
  const out = Buffer.alloc(2 + 2 * registers);
  pdu.copy(out, 0, 0, Math.min(pdu.length, out.length));
  out[1] = 2 * registers;
  // Added registers repeat a recognisable value, so a decoded one would stand out.
  for (let at = pdu.length; at + 1 < out.length; at += 2) out.writeUInt16BE(0xbad0, at);
  return out;
}

export function isDisappeared(active: ActiveFault, nowMs: number): boolean {
  const spec = active.fault.disappear;
  if (spec === undefined) return false;
  if (spec === true) return true;
  const elapsed = nowMs - active.sinceMs - (spec.afterMs ?? 0);
  if (elapsed < 0) return false;
  if (spec.forMs === undefined) return true;
  const phase = spec.everyMs !== undefined && spec.everyMs > 0 ? elapsed % spec.everyMs : elapsed;
  return phase < spec.forMs;
}

export function decideFault(active: ActiveFault | undefined, nowMs: number, random: () => number): FaultAction {
  if (active === undefined) return NO_FAULT_ACTION;
  const { fault } = active;
  if (fault.timeout === true) return { answer: false, reason: 'timeout' };
  if (isDisappeared(active, nowMs)) return { answer: false, reason: 'disappeared' };
  const garble = fault.garble === true || (typeof fault.garble === 'number' && random() < fault.garble);
  return { answer: true, delayMs: Math.max(0, fault.slowMs ?? 0), garble, exception: fault.exception, extraRegisters: fault.extraRegisters ?? 0 };
}

/** Check a fault from a map file or an API call; every problem with its path. */
export function validateFault(fault: unknown, path: string): string[] {
  const problems: string[] = [];
  if (typeof fault !== 'object' || fault === null || Array.isArray(fault)) return [`${path}: must be an object`];
  const f = fault as Record<string, unknown>;
  const known = ['exception', 'timeout', 'slowMs', 'disappear', 'garble', 'extraRegisters'];
  for (const key of Object.keys(f)) if (!known.includes(key)) problems.push(`${path}.${key}: unknown fault (known: ${known.join(', ')})`);
  if (f.timeout !== undefined && typeof f.timeout !== 'boolean') problems.push(`${path}.timeout: must be true or false`);
  if (f.slowMs !== undefined && !isNonNegative(f.slowMs)) problems.push(`${path}.slowMs: must be a number >= 0`);
  if (f.garble !== undefined && typeof f.garble !== 'boolean' && !(isNonNegative(f.garble) && Number(f.garble) <= 1)) {
    problems.push(`${path}.garble: must be true, false or a fraction 0..1`);
  }
  if (f.extraRegisters !== undefined && !(isIntIn(f.extraRegisters, -124, 124) && f.extraRegisters !== 0)) {
    problems.push(`${path}.extraRegisters: must be a whole number of registers -124..124, not 0`);
  }
  if (f.disappear !== undefined && f.disappear !== true) problems.push(...validateDisappear(f.disappear, `${path}.disappear`));
  if (f.exception !== undefined) problems.push(...validateException(f.exception, `${path}.exception`));
  return problems;
}

function validateDisappear(value: unknown, path: string): string[] {
  if (typeof value !== 'object' || value === null) return [`${path}: must be true or { afterMs, forMs, everyMs }`];
  const d = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of ['afterMs', 'forMs', 'everyMs']) {
    if (d[key] !== undefined && !isNonNegative(d[key])) problems.push(`${path}.${key}: must be a number >= 0`);
  }
  if (d.everyMs !== undefined && d.forMs === undefined) problems.push(`${path}.everyMs: needs forMs`);
  return problems;
}

function validateException(value: unknown, path: string): string[] {
  if (typeof value !== 'object' || value === null) return [`${path}: must be { code, table?, address?, count?, functions? }`];
  const e = value as Record<string, unknown>;
  const problems: string[] = [];
  if (!isIntIn(e.code, 1, 255)) problems.push(`${path}.code: must be an exception code 1..255`);
  if (e.table !== undefined && !TABLES.includes(e.table as Table)) problems.push(`${path}.table: must be one of ${TABLES.join(', ')}`);
  if (e.address !== undefined && !isIntIn(e.address, 0, 65535)) problems.push(`${path}.address: must be 0..65535`);
  if (e.count !== undefined && !isIntIn(e.count, 1, 65536)) problems.push(`${path}.count: must be 1..65536`);
  if (e.functions !== undefined && !(Array.isArray(e.functions) && e.functions.every((fc) => isIntIn(fc, 1, 127)))) {
    problems.push(`${path}.functions: must be a list of function codes 1..127`);
  }
  return problems;
}

function isNonNegative(value: unknown): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function isIntIn(value: unknown, min: number, max: number): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}
