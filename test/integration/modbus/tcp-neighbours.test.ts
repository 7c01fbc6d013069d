// Modbus TCP with maxInFlight 1 (issue 28): a unit that answers late or with a stale transaction
// id, beside a healthy one, against an independent raw peer. After its first timeout its requests
// go beside the slot (beside-lane.ts), so the healthy unit misses the polls of that one timeout,
// not of every timeout and probe that follows. Counted in missed polls; the p99 ratio is in
// `npm run bench -- hostile`.
import { describe, expect, it } from 'vitest';
import { runHostileScenario } from '../../helpers/hostile-scenario.js';

const POLL_MS = 250;
const TIMEOUT_MS = 600;

describe.each(['late', 'wrong-transaction'] as const)('a %s unit beside a healthy one on Modbus TCP, maxInFlight 1', (mode) => {
  it('costs the healthy unit the polls of one timeout, and no value is wrong', async () => {
    const result = await runHostileScenario({
      transport: 'tcp', mode, attackMs: 10_000, pollIntervalMs: POLL_MS, timeoutMs: TIMEOUT_MS, lateMs: TIMEOUT_MS + 100,
      maxInFlight: 1, cooldown: { afterTimeouts: 3, initialMs: 1_000, maxMs: 2_000 }, minAttacks: 8, minHealthySamples: 3,
    });
    expect(result.wrongValues).toBe(0);
    const times = result.healthySampleTimes;
    const polls = Math.round((times[times.length - 1]! - times[0]!) / POLL_MS) + 1;
    // One timeout of 600 ms blocks about 2-3 polls of 250 ms; every timeout and probe used to (~9 in 10 s).
    expect(polls - times.length).toBeLessThanOrEqual(4);
    expect(result.stats.timeouts).toBeGreaterThanOrEqual(4);
  }, 90_000);
});
