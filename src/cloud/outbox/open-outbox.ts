// Picks the outbox implementation for the configured mode.
import { MemoryFirstOutbox } from './memory-first-outbox.js';
import { Outbox } from './outbox.js';
import type { ReportOutbox } from '../../core/outbox-types.js';
import type { OutboxMode, OutboxOptions } from './outbox-options.js';

export function openOutbox(mode: OutboxMode, options: OutboxOptions): ReportOutbox {
  return mode === 'write-ahead' ? new Outbox(options) : new MemoryFirstOutbox(options);
}
