// The simulated devices: units with memory, dynamic registers, faults and counters. Transport-free:
// servers hand it (unit, PDU) and get back what to do; time and randomness come from outside.
import { type Logger, isBitTable, type Table } from 'fieldgate/workspace-kit';
import { dynamicWords, type DynamicRegister } from './dynamics.js';
import { encodeTyped, type TypedValue } from './encode.js';
import { decideFault, isDisappeared, resizeReadReply, validateFault, type ActiveFault, type UnitFault } from './faults.js';
import type { SimMap, SimUnitSpec } from './map-file.js';
import { UnitMemory } from './memory.js';
import { handlePdu } from './pdu.js';

export type Outcome =
  | { kind: 'reply'; pdu: Buffer; delayMs: number; garble: boolean }
  | { kind: 'drop'; reason: 'timeout' | 'disappeared' | 'unknown-unit' | 'broadcast' };

export interface UnitCounters {
  /** Requests addressed to the unit (answered or not). */
  requests: number;
  replies: number;
  exceptions: number;
  /** Requests left unanswered by a timeout/disappear fault. */
  dropped: number;
  garbled: number;
}

export interface LineCounters {
  /** Frames thrown away because the CRC did not match. */
  badCrc: number;
  /** Frames for unit ids this simulator does not have. */
  foreignUnit: number;
  /** Baud-accurate RTU: requests that began less than t3.5 after the previous frame (ignored in strict mode). */
  earlyRequests: number;
}

export interface SimulatorOptions {
  logger: Logger;
  /** Milliseconds clock (default Date.now); tests pass a fake. */
  clock?: () => number;
  random?: () => number;
}

interface SimUnit {
  spec: SimUnitSpec;
  memory: UnitMemory;
  dynamic: DynamicRegister[];
  fault?: ActiveFault;
  counters: UnitCounters;
  /** Last reported presence, so appearing/disappearing is logged once per transition. */
  present: boolean;
}

export const BROADCAST_UNIT = 0;

export class Simulator {
  readonly line: LineCounters = { badCrc: 0, foreignUnit: 0, earlyRequests: 0 };
  private readonly unitsById = new Map<number, SimUnit>();
  private readonly log: Logger;
  private readonly clock: () => number;
  private readonly random: () => number;
  private readonly startedAt: number;

  constructor(map: SimMap, options: SimulatorOptions) {
    this.log = options.logger;
    this.clock = options.clock ?? Date.now;
    this.random = options.random ?? Math.random;
    this.startedAt = this.clock();
    for (const spec of map.units) {
      const memory = new UnitMemory(spec.sizes);
      for (const v of spec.values) v.words.forEach((w, i) => (v.alone ? memory.table(v.table).setAlone(v.address + i, w) : memory.table(v.table).set(v.address + i, w)));
      const unit: SimUnit = {
        spec, memory, dynamic: [...spec.dynamic], present: true,
        counters: { requests: 0, replies: 0, exceptions: 0, dropped: 0, garbled: 0 },
      };
      if (spec.fault !== undefined) unit.fault = { fault: spec.fault, sinceMs: this.startedAt };
      this.unitsById.set(spec.unit, unit);
    }
  }

  unitIds(): number[] {
    return [...this.unitsById.keys()].sort((a, b) => a - b);
  }

  hasUnit(unit: number): boolean {
    return this.unitsById.has(unit);
  }

  /** One request PDU for `unit` -> reply (possibly delayed/garbled) or silence. */
  handle(unit: number, pdu: Buffer): Outcome {
    if (unit === BROADCAST_UNIT && !this.unitsById.has(BROADCAST_UNIT)) return this.broadcast(pdu);
    const sim = this.unitsById.get(unit);
    if (sim === undefined) {
      this.line.foreignUnit += 1;
      return { kind: 'drop', reason: 'unknown-unit' };
    }
    const now = this.clock();
    sim.counters.requests += 1;
    const action = decideFault(sim.fault, now, this.random);
    this.notePresence(unit, sim, action.answer || action.reason !== 'disappeared');
    if (!action.answer) {
      sim.counters.dropped += 1;
      this.log.debug({ unit, fc: pdu[0], reason: action.reason }, 'request not answered (fault)');
      return { kind: 'drop', reason: action.reason };
    }
    this.refreshDynamic(sim, now);
    const result = handlePdu(sim.memory, pdu, action.exception);
    const response = resizeReadReply(result.response, action.extraRegisters);
    sim.counters.replies += 1;
    if (result.exception !== undefined) sim.counters.exceptions += 1;
    if (action.garble) sim.counters.garbled += 1;
    this.log.debug({ unit, ...result.scope, exception: result.exception }, 'request');
    return { kind: 'reply', pdu: response, delayMs: action.delayMs, garble: action.garble };
  }

  setFault(unit: number, fault: UnitFault): void {
    const problems = validateFault(fault, 'fault');
    if (problems.length > 0) throw new Error(`invalid fault for unit ${unit}: ${problems.join('; ')}`);
    this.unit(unit).fault = { fault, sinceMs: this.clock() };
    this.log.info({ unit, fault }, 'fault set');
  }

  clearFault(unit: number): void {
    const sim = this.unit(unit);
    if (sim.fault === undefined) return;
    sim.fault = undefined;
    this.notePresence(unit, sim, true);
    this.log.info({ unit }, 'fault cleared');
  }

  faultOf(unit: number): UnitFault | undefined {
    return this.unit(unit).fault?.fault;
  }

  /** Whether the unit currently answers (no timeout/disappear in effect). */
  isAnswering(unit: number): boolean {
    const { fault } = this.unit(unit);
    return fault === undefined || (fault.fault.timeout !== true && !isDisappeared(fault, this.clock()));
  }

  /** Raw write: a 16-bit register (negative values as two's complement) or a bit (true/false/0/1). */
  setRegister(unit: number, table: Table, address: number, value: number | boolean): void {
    const bank = this.unit(unit).memory.table(table);
    if (isBitTable(table)) {
      bank.set(address, value === true || value === 1 ? 1 : 0);
      return;
    }
    if (typeof value !== 'number' || !Number.isInteger(value) || value < -32768 || value > 65535) {
      throw new RangeError(`register value must be an integer -32768..65535, got ${String(value)}`);
    }
    bank.set(address, value & 0xffff);
  }

  /** Typed write over several registers (float32, int64, string...). */
  setTyped(unit: number, table: 'holding' | 'input', address: number, value: TypedValue): void {
    const encoded = encodeTyped(value);
    if (!encoded.ok) throw new RangeError(encoded.error);
    const bank = this.unit(unit).memory.table(table);
    if (!bank.covers(address, encoded.words.length)) throw new RangeError(`address ${address} outside the ${table} table`);
    encoded.words.forEach((w, i) => bank.set(address + i, w));
  }

  getRegister(unit: number, table: Table, address: number): number {
    const sim = this.unit(unit);
    this.refreshDynamic(sim, this.clock());
    return sim.memory.table(table).get(address);
  }

  getRegisters(unit: number, table: Table, address: number, count: number): number[] {
    return Array.from({ length: count }, (_, i) => this.getRegister(unit, table, address + i));
  }

  /** Make a register change by itself (replaces an earlier behaviour at the same place). */
  addDynamic(unit: number, spec: DynamicRegister): void {
    const sim = this.unit(unit);
    sim.dynamic = sim.dynamic.filter((d) => d.table !== spec.table || d.address !== spec.address);
    sim.dynamic.push(spec);
  }

  counters(unit: number): UnitCounters {
    return { ...this.unit(unit).counters };
  }

  private broadcast(pdu: Buffer): Outcome {
    const now = this.clock();
    for (const [unit, sim] of this.unitsById) {
      if (!decideFault(sim.fault, now, this.random).answer) continue;
      const result = handlePdu(sim.memory, pdu);
      this.log.debug({ unit, ...result.scope, broadcast: true }, 'request');
    }
    return { kind: 'drop', reason: 'broadcast' };
  }

  private refreshDynamic(sim: SimUnit, now: number): void {
    for (const d of sim.dynamic) {
      const bank = sim.memory.table(d.table);
      dynamicWords(d, now - this.startedAt).forEach((w, i) => {
        if (bank.covers(d.address + i, 1)) bank.set(d.address + i, w);
      });
    }
  }

  private notePresence(unit: number, sim: SimUnit, present: boolean): void {
    if (sim.present === present) return;
    sim.present = present;
    if (present) this.log.info({ unit }, 'unit back');
    else this.log.info({ unit }, 'unit disappeared');
  }

  private unit(unit: number): SimUnit {
    const sim = this.unitsById.get(unit);
    if (sim === undefined) throw new RangeError(`no unit ${unit} in this simulator (units: ${this.unitIds().join(', ')})`);
    return sim;
  }
}
