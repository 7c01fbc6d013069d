// Conditions logged once when they start and once when they end, never per occurrence (pure but
// for the logger it is given).
import type { Logger } from './logger.js';

export class TransitionLog {
  private active = new Set<string>();

  constructor(private readonly logger: Logger) {}

  isActive(key: string): boolean {
    return this.active.has(key);
  }

  /** Logs `startMessage` when `on` becomes true and `endMessage` when it becomes false again. */
  update(key: string, on: boolean, startMessage: string, endMessage: string, fields: Record<string, unknown> = {}): void {
    if (on === this.active.has(key)) return;
    if (on) {
      this.active.add(key);
      this.logger.warn(fields, startMessage);
    } else {
      this.active.delete(key);
      this.logger.info(fields, endMessage);
    }
  }
}
