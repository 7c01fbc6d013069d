// The remote commissioning `read` command's params, checked before the bus is touched (pure).
import type { SelfCommandLimits } from '../../core/config/self-identity.js';
import type { PointConfig } from '../../core/config/site-types.js';
import { describeValue } from '../../core/config/issues.js';
import type { PointSelection } from '../../core/points/codec.js';
import { firstNames } from '../../core/device-write-types.js';
import { TABLES, VALUE_TYPES, isBitTable, widthOf, type Table, type ValueType } from '../../core/points/types.js';

export interface ReadableBus {
  kind: 'rtu' | 'tcp' | 'rtu-over-tcp';
}

export interface RemoteRead extends PointSelection {
  bus: string;
}

export type ReadParamsResult = { ok: true; read: RemoteRead } | { ok: false; message: string };

const KNOWN_PARAMS = ['bus', 'unit', 'table', 'address', 'count', 'type', 'bit', 'wordOrder', 'byteOrder'];
const ORDERS = ['big', 'little'] as const;

class ParamError extends Error {}

function integer(params: Record<string, unknown>, name: string, min: number, max: number, fallback?: number): number {
  const value = params[name] === undefined ? fallback : params[name];
  if (value === undefined) throw new ParamError(`${name} is required (an integer ${min}..${max})`);
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ParamError(`${name} must be an integer ${min}..${max} (got ${describeValue(value)})`);
  }
  return value;
}

function choice<T extends string>(params: Record<string, unknown>, name: string, allowed: readonly T[], fallback: T | undefined): T | undefined {
  const value = params[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new ParamError(`${name} must be one of ${allowed.join(', ')} (got ${describeValue(value)})`);
  }
  return value as T;
}

function checkedBus(params: Record<string, unknown>, buses: ReadonlyMap<string, ReadableBus>): [string, ReadableBus] {
  const name = params.bus;
  const known = firstNames([...buses.keys()]);
  if (typeof name !== 'string') throw new ParamError(`bus must be the name of a bus (known: ${known}) (got ${describeValue(name)})`);
  const bus = buses.get(name);
  if (!bus) throw new ParamError(`unknown bus ${describeValue(name)} (known: ${known})`);
  return [name, bus];
}

function parse(params: Record<string, unknown>, buses: ReadonlyMap<string, ReadableBus>, limits: SelfCommandLimits): RemoteRead {
  const unknown = Object.keys(params).filter((key) => !KNOWN_PARAMS.includes(key));
  if (unknown.length > 0) throw new ParamError(`unknown param(s) ${firstNames(unknown.map(describeValue))} (known: ${KNOWN_PARAMS.join(', ')})`);
  const [busName, bus] = checkedBus(params, buses);
  // On a serial line unit 0 is broadcast: nobody answers a read sent to it.
  const unit = bus.kind === 'tcp' ? integer(params, 'unit', 0, 255) : integer(params, 'unit', 1, 247);
  const table = choice(params, 'table', TABLES, 'holding') as Table;
  const address = integer(params, 'address', 0, 65535);
  const bits = isBitTable(table);
  const max = bits ? limits.readMaxBits : limits.readMaxRegisters;
  const type = choice<ValueType>(params, 'type', VALUE_TYPES, undefined);
  const count = integer(params, 'count', 1, max, 1);
  const unitOf = bits ? 'bits' : 'registers';
  if (type === undefined) return checkEnd({ bus: busName, unit, table, address, count, values: count });
  if (bits && type !== 'bool') throw new ParamError(`type of a ${table} read must be bool (got ${describeValue(type)})`);
  if (!bits && type === 'bool') throw new ParamError(`type bool is for coil and discrete reads; use bit with a bit number for a register`);
  const point: PointConfig = {
    id: 'value', table, address, type,
    bit: integer(params, 'bit', 0, 15, 0),
    length: type === 'string' ? count : 1,
    wordOrder: choice(params, 'wordOrder', ORDERS, 'big') ?? 'big',
    byteOrder: choice(params, 'byteOrder', ORDERS, 'big') ?? 'big',
    scale: 1, offset: 0, writable: false,
    report: { mode: 'change', deadband: 0, deadbandKind: 'absolute', maxSilenceMs: 0 },
  };
  if (bits || type === 'string') return checkEnd({ bus: busName, unit, table, address, count, point, values: bits ? count : 1 });
  const words = count * widthOf(type, 1);
  if (words > max) throw new ParamError(`${count} values of ${type} need ${words} ${unitOf}, more than the ${max} one read may fetch`);
  return checkEnd({ bus: busName, unit, table, address, count: words, point, values: count });
}

function checkEnd(read: RemoteRead): RemoteRead {
  if (read.address + read.count > 65536) throw new ParamError(`the read runs past address 65535 (address ${read.address}, ${read.count} long)`);
  return read;
}

/** Every param checked; the first problem is the answer, nothing is read. */
export function parseReadParams(params: Record<string, unknown>, buses: ReadonlyMap<string, ReadableBus>, limits: SelfCommandLimits): ReadParamsResult {
  try {
    return { ok: true, read: parse(params, buses, limits) };
  } catch (err) {
    if (err instanceof ParamError) return { ok: false, message: err.message };
    throw err;
  }
}
