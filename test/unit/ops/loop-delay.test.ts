// LoopDelaySampler on a manual clock: how late each sample ran, summarised and reset per scrape.
import { afterEach, describe, expect, it } from 'vitest';
import { LoopDelaySampler } from '../../../src/ops/loop-delay.js';
import { ManualClock } from '../../helpers/manual-clock.js';

/** Runs `lateness.length` samples of a 1000 ms period, the n-th running lateness[n] ms after it was due. */
function sampled(lateness: number[]): { sampler: LoopDelaySampler; clock: ManualClock } {
  const clock = new ManualClock();
  const sampler = new LoopDelaySampler(clock, 1000);
  for (const late of lateness) {
    clock.advance(999);
    // The loop is busy past the due instant: the timer fires when it turns again.
    clock.time += 1 + late;
    clock.advance(0);
  }
  return { sampler, clock };
}

describe('LoopDelaySampler', () => {
  let sampler: LoopDelaySampler | undefined;
  afterEach(() => sampler?.close());

  it.each([
    ['no sample yet', [], { count: 0, min: NaN, max: NaN }],
    ['on time', [0, 0, 0], { count: 3, min: 1e-9, max: 1e-9 }],
    ['one stall of 2.5 s among prompt samples', [0, 2500, 1, 0], { count: 4, min: 1e-9, max: 2.5 }],
    ['a steady 20 ms', [20, 20], { count: 2, min: 0.02, max: 0.02 }],
  ])('%s', (_name, lateness, expected) => {
    ({ sampler } = sampled(lateness));
    const summary = sampler.summary();
    expect(summary.count).toBe(expected.count);
    if (expected.count === 0) {
      expect(Object.values({ ...summary, count: NaN }).every(Number.isNaN)).toBe(true);
      return;
    }
    // The histogram keeps ~3 significant digits.
    expect(summary.min).toBeCloseTo(expected.min, 3);
    expect(summary.max).toBeCloseTo(expected.max, 2);
  });

  it('measures each sample from when the previous one ran, so one stall is counted once', () => {
    const run = sampled([3000, 0, 0]);
    sampler = run.sampler;
    expect(sampler.summary().p50).toBeCloseTo(0, 6);
    expect(sampler.summary().max).toBeCloseTo(3, 2);
  });

  it('starts afresh after reset, and stops sampling when closed', () => {
    const run = sampled([500]);
    sampler = run.sampler;
    sampler.reset();
    expect(sampler.summary().count).toBe(0);
    run.clock.advance(1000);
    expect(sampler.summary().count).toBe(1);
    sampler.close();
    expect(run.clock.sleeping).toBe(0);
    run.clock.advance(5000);
    expect(sampler.summary().count).toBe(1);
  });
});
