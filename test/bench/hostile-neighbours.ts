// The Modbus TCP neighbour case of `npm run bench -- hostile` (issue 28): maxInFlight 1, a healthy
// unit polled every 500 ms beside a unit that answers late or with a stale transaction id, with a
// timeout (1000 ms) longer than the poll period, so every timeout the healthy unit waits for costs
// it polls. Quiet, then attack, in the same run: the healthy unit's p99 period and missed polls.
import type { PeerMode } from '../helpers/hostile-modbus.js';
import { runHostileScenario } from '../helpers/hostile-scenario.js';
import { p99Period } from './hostile-slow.js';

const POLL_MS = 500;
const TIMEOUT_MS = 1_000;
const MODES: PeerMode[] = ['late', 'wrong-transaction'];

/** Polls the sample times' span should have held, minus the samples there are. */
export function missedPolls(times: readonly number[], periodMs: number): number {
  if (times.length < 2) return 0;
  return Math.round((times[times.length - 1]! - times[0]!) / periodMs) + 1 - times.length;
}

export async function runNeighbours(log: (line: string) => void, quietMs = 10_000, attackMs = 100_000): Promise<void> {
  log(`## Modbus TCP neighbours, maxInFlight 1: healthy unit polled every ${POLL_MS} ms, timeoutMs ${TIMEOUT_MS}, production cool-down, ${quietMs / 1000} s quiet then ${attackMs / 1000} s attack`);
  log('');
  log('| hostile unit | healthy p99 quiet (ms) | healthy p99 attack (ms) | ratio | healthy polls missed | timeouts | wrong values (must be 0) |');
  log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const mode of MODES) {
    const r = await runHostileScenario({
      transport: 'tcp', mode, lateMs: TIMEOUT_MS + 100, quietMs, attackMs, pollIntervalMs: POLL_MS, timeoutMs: TIMEOUT_MS, maxInFlight: 1,
      cooldown: { afterTimeouts: 3, initialMs: 5_000, maxMs: 60_000 }, minAttacks: 3, minHealthySamples: 3,
    });
    const quiet = p99Period(r.quietSampleTimes);
    const attack = p99Period(r.healthySampleTimes);
    log(`| ${mode} | ${quiet.toFixed(0)} | ${attack.toFixed(0)} | ${(attack / quiet).toFixed(2)}x | ${missedPolls(r.healthySampleTimes, POLL_MS)} of ${missedPolls(r.healthySampleTimes, POLL_MS) + r.healthySampleTimes.length} | ${r.stats.timeouts} | ${r.wrongValues} |`);
  }
  log('');
}
