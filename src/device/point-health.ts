// Per-point health of one device: a point the device answers for but that yields no value is
// failing; each change is logged once (failing, reading again) and counted. Time is passed in.
import type { Logger } from '../core/logger.js';
import { exceptionName } from '../field/modbus/errors.js';
import type { PointFailure } from './poll-cycle.js';
import type { Table } from '../core/points/types.js';
import type { EpochMs, MonoMs } from '../core/time.js';

export interface FailingPointStatus {
  point: string;
  table: Table;
  address: number;
  /** Error class name, e.g. ModbusExceptionError. */
  error: string;
  exceptionCode?: number;
  message: string;
  /** Wall clock (shown): the start of the first failed cycle of this failure. */
  since: EpochMs;
}

export class PointHealth {
  private readonly failing = new Map<string, FailingPointStatus>();
  /** Monotonic start of each failure, for how long it lasted. */
  private readonly failingSince = new Map<string, MonoMs>();
  /** Transitions to failing since start. */
  private transitions = 0;

  constructor(private readonly log: Logger) {}

  /** One cycle's result: `read` decoded, `failures` answered for without a value; the cycle's start on both clocks. */
  update(read: Iterable<string>, failures: readonly PointFailure[], now: MonoMs, wallNow: EpochMs): void {
    for (const id of read) {
      const was = this.failing.get(id);
      if (!was) continue;
      this.failing.delete(id);
      const since = this.failingSince.get(id) ?? now;
      this.failingSince.delete(id);
      this.log.info({ point: id, table: was.table, address: was.address, failedForMs: now - since }, 'point reading again');
    }
    for (const failure of failures) {
      const { point } = failure;
      if (this.failing.has(point.id)) continue;
      const code = failure.exceptionCode;
      this.failing.set(point.id, {
        point: point.id, table: point.table, address: point.address, error: failure.kind,
        ...(code === undefined ? {} : { exceptionCode: code }), message: failure.message, since: wallNow,
      });
      this.failingSince.set(point.id, now);
      this.transitions += 1;
      this.log.warn({
        point: point.id, table: point.table, address: point.address, error: failure.kind,
        ...(code === undefined ? {} : { exceptionCode: code, exceptionName: exceptionName(code) }), reason: failure.message,
      }, 'point failing');
    }
  }

  failingCount(): number {
    return this.failing.size;
  }

  failureTransitions(): number {
    return this.transitions;
  }

  status(): FailingPointStatus[] {
    return [...this.failing.values()].map((s) => ({ ...s }));
  }
}
