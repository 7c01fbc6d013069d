// The lost-frame cases of `npm run bench -- hostile` (issue 28): RTU at the defaults (1 s poll,
// 1000 ms timeout, 10 s late-reply guard, production cool-down) against a raw device on a socat
// pty that ignores one request, then 1 % of requests at random (seeded, so runs compare). Samples
// lost per lost frame: cycle slots without a sample over frames the device ignored.
import { runLostFrames } from '../helpers/lost-frames.js';

export async function runLostFrameCases(log: (line: string) => void, randomSamples = 300): Promise<void> {
  log('## Lost frames: RTU at the defaults (1 s poll, timeoutMs 1000), the device ignores requests');
  log('');
  log('| case | samples | lost frames | samples lost | per lost frame (target <= 2) | offline transitions | wrong values | timeouts | guard rejects | cool-down rejects |');
  log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  const cases = [
    { name: 'one lost frame', options: { lose: { requests: [5] }, samples: 20 } },
    // Seed 7 loses requests 59, 137, 188, 234 and 241 of the first 320 (two of them 7 apart).
    { name: '1 % random loss', options: { lose: { rate: 0.01, seed: 7 }, samples: randomSamples, minLost: 3 } },
  ];
  for (const { name, options } of cases) {
    const r = await runLostFrames(options);
    const s = r.stats;
    log(`| ${name} | ${r.samples} | ${r.lostFrames} | ${r.samplesLost} | ${(r.samplesLost / r.lostFrames).toFixed(2)} | ${r.offlineTransitions.length} | ${r.wrongValues} | ${s.timeouts} | ${s.lateGuardRejects} | ${s.cooldownRejects} |`);
  }
  log('');
}
