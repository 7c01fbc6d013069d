// The assertions every hostile run must pass: no wrong value, the healthy unit kept polling, and
// the hostile unit recovered once its peer turned good (runHostileScenario waits for that).
import { expect } from 'vitest';
import type { PeerMode } from '../../helpers/hostile-modbus.js';
import { runHostileScenario, type ScenarioOptions } from '../../helpers/hostile-scenario.js';

export async function expectSurvives(transport: ScenarioOptions['transport'], mode: PeerMode, extra: Partial<ScenarioOptions> = {}): Promise<void> {
  const result = await runHostileScenario({ transport, mode, attackMs: 1_500, pollIntervalMs: 100, timeoutMs: 150, ...extra });
  expect(result.wrongValues).toBe(0);
  expect(result.healthySampleTimes.length).toBeGreaterThanOrEqual(3);
  expect(result.recoveryMs).toBeGreaterThanOrEqual(0);
  // Every attack but a slow (yet in-time) reply leaves a trace in the counters.
  const { discardedReplies, timeouts, frameErrors } = result.stats;
  if (mode !== 'slow') expect(discardedReplies + timeouts + frameErrors).toBeGreaterThan(0);
}
