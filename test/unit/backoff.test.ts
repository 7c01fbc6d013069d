// The one backoff: retry counted from 0, capped, reduced by up to `jitter` of itself.
import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../src/core/backoff.js';

describe('backoffDelay', () => {
  // Bus reopens (initial 250, max 30 s, jitter 0.2).
  const bus = { initialMs: 250, maxMs: 30_000, jitter: 0.2 };
  it.each([
    [0, 0, 250],
    [1, 0, 500],
    [6, 0, 16_000],
    [7, 0, 30_000],
    [100, 0, 30_000],
    [0, 1, 200],
    [7, 1, 24_000],
    [7, 0.5, 27_000],
  ])('bus: retry %i with random %f waits %i ms', (retry, random, expected) => {
    expect(backoffDelay(bus, retry, () => random)).toBe(expected);
  });

  // Cloud reconnects and interface A/B retries (initial 100, max 1000, jitter 0.4): never above the cap.
  const cloud = { initialMs: 100, maxMs: 1000, jitter: 0.4 };
  it.each([
    [0, 0.5, 80], [1, 0.5, 160], [2, 0.5, 320], [4, 0.5, 800], [49, 0.5, 800], [0, 1, 60], [0, 0, 100], [-1, 0, 100],
  ])('cloud: retry %d random %d -> %d ms', (retry, random, expected) => {
    expect(backoffDelay(cloud, retry, () => random)).toBe(expected);
  });
});
