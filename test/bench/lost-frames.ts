// The lost-frame cases of `npm run bench -- hostile` (issue 28): RTU at the defaults (1 s poll,
// 1000 ms timeout, 10 s late-reply guard, production cool-down) against a raw device on a socat
// pty that ignores one request, then 1 % of requests at random (seeded, so runs compare). Samples
// lost per lost frame: cycle slots without a sample over frames the device ignored.
import { runLostFrames } from '../helpers/lost-frames.js';
import { runPlainMaster } from '../helpers/plain-master.js';

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

/**
 * Random loss beside a plain master (issue 41): the same raw device losing 1 % and 5 % of frames
 * at random (seeded), RTU, timeout 300 ms, 500 ms polls; fieldgate at its defaults otherwise (one
 * identical repeat after a timeout), a plain master repeating a timed-out request once, and once
 * without the repeat. Measured in the same run, one after the other.
 */
export async function runRandomLossCases(log: (line: string) => void, samples = 400): Promise<void> {
  log('## Random frame loss beside a plain master: RTU, timeout 300 ms, 500 ms polls');
  log('');
  log('| loss | master | samples due | lost frames | samples lost | share lost (target <= 2 % at 5 %) | wrong values |');
  log('| --- | --- | --- | --- | --- | --- | --- |');
  const pct = (lost: number, due: number) => `${((100 * lost) / Math.max(1, due)).toFixed(1)} %`;
  for (const rate of [0.01, 0.05]) {
    const seed = 7;
    const r = await runLostFrames({ lose: { rate, seed }, samples, minLost: 1, pollIntervalMs: 500, timeoutMs: 300 });
    const due = r.samples + r.samplesLost;
    log(`| ${rate * 100} % | fieldgate (timeoutRepeats 1) | ${due} | ${r.lostFrames} | ${r.samplesLost} | ${pct(r.samplesLost, due)} | ${r.wrongValues} |`);
    for (const repeats of [1, 0]) {
      const p = await runPlainMaster({ rate, seed, samples, pollIntervalMs: 500, timeoutMs: 300, repeats });
      log(`| ${rate * 100} % | plain master, ${repeats === 1 ? 'one repeat' : 'no repeat'} | ${samples} | ${p.lostFrames} | ${p.samplesLost} | ${pct(p.samplesLost, samples)} | ${p.wrongValues} |`);
    }
  }
  log('');
}
