// Slow, late and busy units next to a healthy one (issue 18), against an independent raw peer on a
// socat pty (RTU) and on a TCP serial server (RTU over TCP): a reply up to 10x late, the first one
// included, never becomes a value, whether the unit hears nothing while late or answers meanwhile
// (then polled on with reads split so their replies have other lengths);
// late replies are counted per unit; a unit that stays busy or keeps answering late cools down.
import { describe, expect, it } from 'vitest';
import { HOSTILE_UNIT, runHostileScenario, type ScenarioOptions } from '../../helpers/hostile-scenario.js';
import type { SlowMode } from '../../helpers/hostile-slow.js';

const TIMEOUT_MS = 150;

async function run(transport: ScenarioOptions['transport'], mode: SlowMode, lateMs: number, minAttacks: number) {
  return runHostileScenario({
    transport, mode, lateMs, minAttacks, attackMs: 1_000, pollIntervalMs: 100, timeoutMs: TIMEOUT_MS,
    // A unit never seen late keeps being polled (split reads) while its first late reply is due:
    // the run may recover before that reply comes, so it waits for it.
    ...(mode === 'late-silent' || mode === 'late-answering' ? { settled: (s) => s.lateReplies > 0 } : {}),
  });
}

describe.each(['rtu', 'rtu-over-tcp'] as const)('late and busy units on %s', (transport) => {
  it.each([
    ['late-silent', 3], ['late-silent', 10], ['late-answering', 3], ['late-answering', 10],
  ] as const)('%s, %sx the timeout: no late reply becomes a value, each is counted for its unit', async (mode, factor) => {
    const result = await run(transport, mode, factor * TIMEOUT_MS, 4);
    expect(result.wrongValues).toBe(0);
    expect(result.healthySampleTimes.length).toBeGreaterThanOrEqual(3);
    expect(result.stats.lateReplies).toBeGreaterThan(0);
    const hostile = result.stats.lateUnits.find((u) => u.unit === HOSTILE_UNIT);
    expect(hostile?.lateReplies).toBeGreaterThan(0);
    // Measured from the request: at least the unit's real lateness (timers only ever fire later).
    expect(hostile?.slowestAnswerMs).toBeGreaterThanOrEqual(factor * TIMEOUT_MS);
  }, 90_000);

  it('alternating-late: late replies count as failures, the unit cools down', async () => {
    const result = await run(transport, 'alternating-late', 3 * TIMEOUT_MS, 8);
    expect(result.wrongValues).toBe(0);
    expect(result.stats.lateReplies).toBeGreaterThan(0);
    expect(result.stats.cooldownRejects).toBeGreaterThan(0);
  }, 90_000);

  it('busy-forever: bounded repeats off the line, then the unit cools down', async () => {
    const result = await run(transport, 'busy-forever', 0, 12);
    expect(result.wrongValues).toBe(0);
    expect(result.stats.busyRetries).toBeGreaterThan(0);
    expect(result.stats.cooldownRejects).toBeGreaterThan(0);
    expect(result.healthySampleTimes.length).toBeGreaterThanOrEqual(3);
  }, 90_000);
});
