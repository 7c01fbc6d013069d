// A scriptable in-memory ModbusTransport for bus tests: per-unit behaviour, latency on the test's
// (manual) time, and a record of every transaction with its start/end time and concurrency.
import { ModbusExceptionError, ModbusFrameError, ModbusTimeoutError, PortClosedError, PortOpenError } from '../../src/field/modbus/errors.js';
import type { RawReplyWindow } from '../../src/field/modbus/raw-exchange.js';
import type { ModbusTransport } from '../../src/field/modbus/transport.js';
import type { Time } from '../../src/core/time.js';

export type Reply = 'ok' | 'timeout' | 'silent-close' | { exception: number };

export interface CallRecord {
  unit: number;
  fn: string;
  address: number;
  startedAt: number;
  endedAt?: number;
  outcome?: string;
}

export class FakeTransport implements ModbusTransport {
  readonly target = 'fake';
  constructor(private readonly time: Time) {}
  latencyMs = 10;
  /** Decides the reply per call; default: every unit answers. */
  behaviour: (unit: number, fn: string) => Reply = () => 'ok';
  /** Scripted results of the next open() calls (true = success, false or a reason = failure); empty = success. */
  openResults: Array<boolean | string> = [];
  openCalls: number[] = [];
  calls: CallRecord[] = [];
  inFlight = 0;
  maxInFlight = 0;
  isOpen = false;
  /** Most transactions ever in flight at once for one unit. */
  maxInFlightPerUnit(unit: number): number {
    const records = this.calls.filter((c) => c.unit === unit);
    return Math.max(0, ...records.map((r) => records.filter((o) => o.startedAt <= r.startedAt && (o.endedAt ?? Infinity) > r.startedAt).length));
  }

  private closeListeners: Array<(reason: string, outOfStep?: boolean) => void> = [];
  private pending = new Set<(err: Error) => void>();

  onClose(listener: (reason: string, outOfStep?: boolean) => void): void {
    this.closeListeners.push(listener);
  }

  readonly discardListeners: Array<(reason: string) => void> = [];
  onDiscard(listener: (reason: string) => void): void {
    this.discardListeners.push(listener);
  }

  async open(): Promise<void> {
    this.openCalls.push(this.time.now());
    const ok = this.openResults.length > 0 ? this.openResults.shift() : true;
    if (ok !== true) throw new PortOpenError('fake', typeof ok === 'string' ? ok : 'ENOENT: no such port');
    this.isOpen = true;
  }

  async close(): Promise<void> {
    this.isOpen = false;
    for (const fail of this.pending) fail(new PortClosedError('closed by fieldgate'));
  }

  /** The port vanishes: in-flight requests fail and the close listeners hear about it. */
  drop(reason = 'device unplugged', outOfStep = false): void {
    this.isOpen = false;
    // Out of step, the real transport fails what was on the wire as malformed replies.
    for (const fail of this.pending) fail(outOfStep ? new ModbusFrameError(0, reason) : new PortClosedError(reason));
    for (const listener of this.closeListeners) listener(reason, outOfStep);
  }

  private run<T>(unit: number, fn: string, address: number, timeoutMs: number, value: () => T): Promise<T> {
    if (!this.isOpen) return Promise.reject(new PortClosedError('port not open'));
    const record: CallRecord = { unit, fn, address, startedAt: this.time.now() };
    this.calls.push(record);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    const reply = this.behaviour(unit, fn);
    return new Promise<T>((resolve, reject) => {
      let cancelTimer = (): void => undefined;
      const finish = (outcome: string) => {
        this.pending.delete(fail);
        cancelTimer();
        record.endedAt = this.time.now();
        record.outcome = outcome;
        this.inFlight -= 1;
      };
      const fail = (err: Error) => {
        finish(err.name);
        reject(err);
      };
      this.pending.add(fail);
      if (reply === 'silent-close') {
        this.isOpen = false;
        cancelTimer = this.time.setTimer(() => fail(new PortClosedError('port not open')), 1);
      } else if (reply === 'timeout') {
        cancelTimer = this.time.setTimer(() => fail(new ModbusTimeoutError(unit, timeoutMs)), timeoutMs);
      } else if (reply === 'ok') {
        cancelTimer = this.time.setTimer(() => {
          finish('ok');
          resolve(value());
        }, this.latencyMs);
      } else {
        cancelTimer = this.time.setTimer(() => fail(new ModbusExceptionError(unit, reply.exception)), this.latencyMs);
      }
    });
  }

  readCoils(unit: number, start: number, count: number, timeoutMs: number): Promise<boolean[]> {
    return this.run(unit, 'readCoils', start, timeoutMs, () => Array.from({ length: count }, (_, i) => i % 2 === 0));
  }
  readDiscreteInputs(unit: number, start: number, count: number, timeoutMs: number): Promise<boolean[]> {
    return this.run(unit, 'readDiscreteInputs', start, timeoutMs, () => Array.from({ length: count }, () => true));
  }
  readHoldingRegisters(unit: number, start: number, count: number, timeoutMs: number): Promise<Uint16Array> {
    return this.run(unit, 'readHoldingRegisters', start, timeoutMs,
      () => Uint16Array.from({ length: count }, (_, i) => start + i));
  }
  readInputRegisters(unit: number, start: number, count: number, timeoutMs: number): Promise<Uint16Array> {
    return this.run(unit, 'readInputRegisters', start, timeoutMs,
      () => Uint16Array.from({ length: count }, (_, i) => 1000 + start + i));
  }
  async writeRegister(unit: number, address: number, _value: number, timeoutMs: number): Promise<void> {
    await this.run(unit, 'writeRegister', address, timeoutMs, () => undefined);
  }
  async writeRegisters(unit: number, address: number, _values: readonly number[], timeoutMs: number): Promise<void> {
    await this.run(unit, 'writeRegisters', address, timeoutMs, () => undefined);
  }
  async writeCoil(unit: number, address: number, _value: boolean, timeoutMs: number): Promise<void> {
    await this.run(unit, 'writeCoil', address, timeoutMs, () => undefined);
  }
  async writeCoils(unit: number, address: number, _values: readonly boolean[], timeoutMs: number): Promise<void> {
    await this.run(unit, 'writeCoils', address, timeoutMs, () => undefined);
  }
  /** Broadcast frames sent, in order. */
  readonly broadcasts: Buffer[] = [];
  /** A broadcast: recorded as unit 0, fn 'broadcast'; it holds the line for the turnaround (no reply). */
  broadcast(frame: Buffer, turnaroundMs: number): Promise<void> {
    this.broadcasts.push(frame);
    const latencyMs = this.latencyMs;
    this.latencyMs = turnaroundMs;
    try {
      return this.run(0, 'broadcast', 0, turnaroundMs, () => undefined);
    } finally {
      this.latencyMs = latencyMs;
    }
  }
  /** Raw stream bytes: recorded as unit 0, fn 'raw'; the reply is the request reversed. */
  exchangeRaw(request: Buffer, window: RawReplyWindow): Promise<Buffer> {
    return this.run(0, 'raw', 0, window.replyTimeoutMs, () => Buffer.from(request).reverse());
  }
}
