import { it } from 'vitest';
import { runLostFrames } from '../../helpers/lost-frames.js';
it('loss', async () => {
  const result = await runLostFrames({ lose: { rate: 0.05, seed: 11 }, samples: 34, minLost: 3 });
  const t0 = result.sampleTimes[0] ?? 0;
  console.log(result.lostFrames, result.samplesLost, result.sampleTimes.map((t) => t - t0).join(' '), JSON.stringify(result.stats));
}, 120_000);
