// Who hears of each Modbus operation that finished on a bus (a share's read cache): a listener's
// fault is its own, the request it watched still settles as it did.
import type { Logger } from '../../core/logger.js';
import type { Operation, OperationResult } from './bus-request.js';

/**
 * How an operation that went on the line ended: with its result, or failed (a timeout, an
 * exception, a garbled reply). A failed write may still have been applied (its reply was lost).
 */
export type SettledOutcome = { ok: true; result: OperationResult } | { ok: false; error: unknown };

/** A Modbus operation that finished on the line, at epoch ms `at`. */
export type SettledListener = (unit: number, op: Operation, outcome: SettledOutcome, at: number) => void;

export class SettledListeners {
  private readonly listeners: SettledListener[] = [];

  constructor(private readonly log: Logger) {}

  add(listener: SettledListener): () => void {
    this.listeners.push(listener);
    return () => {
      const at = this.listeners.indexOf(listener);
      if (at >= 0) this.listeners.splice(at, 1);
    };
  }

  notify(unit: number, op: Operation, outcome: SettledOutcome, at: number): void {
    for (const listener of this.listeners) {
      try {
        listener(unit, op, outcome, at);
      } catch (err) {
        this.log.error({ err, unit }, 'settled-request listener failed');
      }
    }
  }
}
