// Who hears of each Modbus operation that succeeded on a bus (a share's read cache): a listener's
// fault is its own, the request it watched still succeeded.
import type { Logger } from '../../core/logger.js';
import type { Operation, OperationResult } from './bus-request.js';

/** A Modbus operation that succeeded on the line (a read with its result), at epoch ms `at`. */
export type SettledListener = (unit: number, op: Operation, result: OperationResult, at: number) => void;

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

  notify(unit: number, op: Operation, result: OperationResult, at: number): void {
    for (const listener of this.listeners) {
      try {
        listener(unit, op, result, at);
      } catch (err) {
        this.log.error({ err, unit }, 'settled-request listener failed');
      }
    }
  }
}
