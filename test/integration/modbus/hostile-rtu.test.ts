// Hostile RTU writer on a socat pty pair: every attack mode against a healthy unit on the same line.
// Zero wrong values reported, the healthy unit keeps polling, the hostile one recovers.
import { describe, expect, it } from 'vitest';
import { RTU_ATTACKS } from '../../helpers/hostile-modbus.js';
import { runHostileScenario } from '../../helpers/hostile-scenario.js';

describe('Modbus RTU against a hostile peer on the line', () => {
  it.each(RTU_ATTACKS)('%s: no wrong value, healthy unit keeps polling, recovery after', async (mode) => {
    const result = await runHostileScenario({ transport: 'rtu', mode, attackMs: 1_500, pollIntervalMs: 100, timeoutMs: 150 });
    expect(result.wrongValues).toBe(0);
    expect(result.healthySampleTimes.length).toBeGreaterThanOrEqual(3);
    expect(result.recoveryMs).toBeGreaterThanOrEqual(0);
    if (mode !== 'slow') expect(result.stats.discardedReplies + result.stats.timeouts + result.stats.frameErrors).toBeGreaterThan(0);
  }, 40_000);
});
