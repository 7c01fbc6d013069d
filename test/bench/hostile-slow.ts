// The slow, late and busy modes of `npm run bench -- hostile` (issue 18): a healthy unit polled
// every 500 ms next to a unit that answers late (0.5, 1, 3 s with timeoutMs 300; silent while late,
// or answering other requests meanwhile), answers late every other time, or is busy forever, on
// RTU (pty), RTU over TCP and Modbus TCP. Each run times the healthy unit's poll period quietly
// first, then under attack, so the p99 ratio compares the same run.
import type { SlowMode } from '../helpers/hostile-slow.js';
import { runHostileScenario, type ScenarioOptions } from '../helpers/hostile-scenario.js';

const POLL_MS = 500;
const TIMEOUT_MS = 300;
/** The production cool-down defaults (BUS_DEFAULTS.cooldown). */
const COOLDOWN = { afterTimeouts: 3, initialMs: 5_000, maxMs: 60_000 };

const CASES: Array<{ mode: SlowMode; lateMs: number }> = [
  ...[500, 1_000, 3_000].flatMap((lateMs) => [{ mode: 'late-silent' as const, lateMs }, { mode: 'late-answering' as const, lateMs }]),
  { mode: 'alternating-late', lateMs: 1_000 },
  { mode: 'busy-forever', lateMs: 0 },
];

export function p99Period(times: readonly number[]): number {
  const periods = times.slice(1).map((t, i) => t - (times[i] as number)).sort((a, b) => a - b);
  if (periods.length === 0) return Number.NaN;
  return periods[Math.min(periods.length - 1, Math.ceil(0.99 * periods.length) - 1)] as number;
}

export async function runSlow(log: (line: string) => void, quietMs = 10_000, attackMs = 20_000): Promise<void> {
  log(`## Slow, late and busy units: healthy unit polled every ${POLL_MS} ms, timeoutMs ${TIMEOUT_MS}, ${quietMs / 1000} s quiet then ${attackMs / 1000} s attack in each run`);
  log('');
  log('| transport | mode | late by (ms) | wrong values (must be 0) | healthy p99 quiet (ms) | healthy p99 attack (ms) | ratio | late replies | guard rejects | cool-down rejects | busy repeats | recovery (s) |');
  log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const transport of ['rtu', 'rtu-over-tcp', 'tcp'] as const) {
    for (const { mode, lateMs } of CASES) {
      const options: ScenarioOptions = {
        transport, mode, lateMs, quietMs, attackMs, pollIntervalMs: POLL_MS, timeoutMs: TIMEOUT_MS, cooldown: COOLDOWN,
        minAttacks: 3, minHealthySamples: 3,
      };
      const r = await runHostileScenario(options);
      const quiet = p99Period(r.quietSampleTimes);
      const attack = p99Period(r.healthySampleTimes);
      const s = r.stats;
      log(`| ${transport} | ${mode} | ${mode === 'busy-forever' ? '-' : lateMs} | ${r.wrongValues} | ${quiet.toFixed(0)} | ${attack.toFixed(0)} | ${(attack / quiet).toFixed(2)}x | ${s.lateReplies} | ${s.lateGuardRejects} | ${s.cooldownRejects} | ${s.busyRetries} | ${(r.recoveryMs / 1000).toFixed(1)} |`);
    }
  }
  log('');
}
