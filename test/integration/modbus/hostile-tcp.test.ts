// Hostile Modbus TCP peer: every attack mode against a healthy unit on the same connection.
// Zero wrong values reported, the healthy unit keeps polling, the hostile one recovers.
import { describe, expect, it } from 'vitest';
import { TCP_ATTACKS } from '../../helpers/hostile-modbus.js';
import { runHostileScenario } from '../../helpers/hostile-scenario.js';

describe('Modbus TCP against a hostile peer', () => {
  it.each(TCP_ATTACKS)('%s: no wrong value, healthy unit keeps polling, recovery after', async (mode) => {
    const result = await runHostileScenario({ transport: 'tcp', mode, attackMs: 1_500, pollIntervalMs: 100, timeoutMs: 150 });
    expect(result.wrongValues).toBe(0);
    expect(result.healthySampleTimes.length).toBeGreaterThanOrEqual(3);
    expect(result.recoveryMs).toBeGreaterThanOrEqual(0);
    if (mode !== 'slow') expect(result.stats.discardedReplies + result.stats.timeouts + result.stats.frameErrors).toBeGreaterThan(0);
  }, 40_000);

  it('keeps requests to one unit apart with maxInFlight 4 while a peer is hostile', async () => {
    const result = await runHostileScenario({ transport: 'tcp', mode: 'wrong-transaction', attackMs: 1_000, pollIntervalMs: 50, timeoutMs: 150, maxInFlight: 4 });
    expect(result.wrongValues).toBe(0);
    expect(result.healthySampleTimes.length).toBeGreaterThanOrEqual(3);
  }, 40_000);
});
