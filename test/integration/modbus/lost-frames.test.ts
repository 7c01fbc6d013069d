// A frame lost to line noise costs one timeout, not a guard (issue 28): RTU at the defaults (1 s
// poll, 1000 ms timeout, 10 s late-reply guard) against a raw device on a socat pty that ignores
// chosen requests. The unit was never seen answering late, so it is polled again at its next
// period (the read split so a late reply could not pass for it): at most 2 samples lost per lost
// frame, and the device never reported offline.
import { describe, expect, it } from 'vitest';
import { runLostFrames } from '../../helpers/lost-frames.js';

describe('lost frames on RTU at the defaults', () => {
  it('one lost frame: at most 2 samples lost, no offline transition', async () => {
    const result = await runLostFrames({ lose: { requests: [3] }, samples: 10 });
    expect(result.lostFrames).toBe(1);
    expect(result.samplesLost).toBeGreaterThanOrEqual(1);
    expect(result.samplesLost).toBeLessThanOrEqual(2);
    expect(result.offlineTransitions).toEqual([]);
    expect(result.wrongValues).toBe(0);
    expect(result.stats).toMatchObject({ timeouts: 1, lateReplies: 0, cooldownRejects: 0 });
  }, 60_000);

  it('random loss (seeded): at most 2 samples lost per lost frame, no offline transition', async () => {
    // 5 % rather than 1 % so a test run sees several losses, two of them 3 requests apart (the
    // benchmark runs 1 %, longer).
    const result = await runLostFrames({ lose: { rate: 0.05, seed: 11 }, samples: 34, minLost: 3 });
    expect(result.lostFrames).toBeGreaterThanOrEqual(3);
    expect(result.samplesLost / result.lostFrames).toBeLessThanOrEqual(2);
    expect(result.offlineTransitions).toEqual([]);
    expect(result.wrongValues).toBe(0);
    expect(result.stats.cooldownRejects).toBe(0);
  }, 120_000);
});
