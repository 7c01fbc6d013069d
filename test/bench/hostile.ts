// `npm run bench -- hostile`: a healthy device sharing a line (RTU pty) or connection (Modbus TCP)
// with a hostile unit, per attack mode: the healthy device's poll period p99 against a run without
// attack, wrong values reported (must be 0) and seconds until the hostile unit reports the truth
// again once it turns good. Then the slow, late and busy modes (hostile-slow.ts), frames lost
// at the RTU defaults (lost-frames.ts: samples lost per lost frame), and the Modbus TCP neighbours
// of a timed-out unit (hostile-neighbours.ts).
import { RTU_ATTACKS, TCP_ATTACKS, type PeerMode } from '../helpers/hostile-modbus.js';
import { runHostileScenario, type ScenarioOptions } from '../helpers/hostile-scenario.js';
import { p99Period, runSlow } from './hostile-slow.js';
import { runLostFrameCases, runRandomLossCases } from './lost-frames.js';
import { runNeighbours } from './hostile-neighbours.js';

const POLL_MS = 500;
const TIMEOUT_MS = 150;

export async function run(log: (line: string) => void, attackMs = 6_000): Promise<void> {
  log(`## Hostile peers: healthy device polled every ${POLL_MS} ms next to a hostile unit (timeout ${TIMEOUT_MS} ms, ${attackMs / 1000} s per attack)`);
  log('');
  log('| transport | attack | healthy period p99 (ms) | vs. no attack (target <= 1.5x) | wrong values (must be 0) | recovery (s) | discarded | reconnects |');
  log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const transport of ['tcp', 'rtu'] as const) {
    const base: Omit<ScenarioOptions, 'mode'> = {
      transport, attackMs, pollIntervalMs: POLL_MS, timeoutMs: TIMEOUT_MS,
      cooldown: { afterTimeouts: 3, initialMs: 1_000, maxMs: 2_000 },
    };
    const modes: PeerMode[] = ['good', ...(transport === 'tcp' ? TCP_ATTACKS : RTU_ATTACKS)];
    let baseline = Number.NaN;
    for (const mode of modes) {
      const r = await runHostileScenario({ ...base, mode });
      const p99 = p99Period(r.healthySampleTimes);
      if (mode === 'good') baseline = p99;
      const ratio = p99 / baseline;
      log(`| ${transport} | ${mode === 'good' ? 'none (baseline)' : mode} | ${p99.toFixed(0)} | ${ratio.toFixed(2)}x | ${r.wrongValues} | ${(r.recoveryMs / 1000).toFixed(2)} | ${r.stats.discardedReplies} | ${r.stats.reconnects} |`);
    }
  }
  log('');
  await runSlow(log);
  await runLostFrameCases(log);
  await runRandomLossCases(log);
  await runNeighbours(log);
}
