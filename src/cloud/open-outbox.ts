// Picks the outbox implementation for the configured mode.
import { MemoryFirstOutbox } from './memory-first-outbox.js';
import { Outbox } from './outbox.js';
import type { OutboxMode, OutboxOptions, ReportOutbox } from './outbox-types.js';

export function openOutbox(mode: OutboxMode, options: OutboxOptions): ReportOutbox {
  return mode === 'write-ahead' ? new Outbox(options) : new MemoryFirstOutbox(options);
}
