// Keeps the inbound bench working: one round per case, checked for correctness only, never speed.
import { describe, expect, it } from 'vitest';
import { measureInbound } from '../../bench/inbound.js';

describe('inbound bench', () => {
  it('handles every hostile message with one log line at most and planned reads', async () => {
    const rows = await measureInbound(1);
    expect(rows.map((r) => [r.logLines, r.busRequests])).toEqual([[1, 0], [1, 0], [1, 1], [0, 1]]);
    expect(rows.every((r) => r.payloadKiB > 0 && r.medianMs >= 0)).toBe(true);
  }, 60_000);
});
