// Keeps the outbox memory bench working: a short run of each mode checked for its accounting only,
// never for bytes (memory figures on a shared machine are the bench's to print, not a verdict).
import { describe, expect, it } from 'vitest';
import { measureOutboxMemory } from '../../bench/outbox-memory.js';

describe('outbox memory bench', () => {
  it.each(['memory-first', 'write-ahead'])('%s: the file refuses writes, reports queue within the cap, the rest are counted', async (mode) => {
    const f = await measureOutboxMemory(mode, 256 * 1024, 1000, 2);
    expect(f.appended).toBeGreaterThan(100);
    expect(f.depth).toBeGreaterThan(0);
    expect(f.depth + f.dropped).toBe(f.appended);
    expect(f.countedPerReport).toBe(483);
  }, 60_000);
});
