// Keeps the idle bench working: one daemon from source, with a cloud link, figures checked for
// sanity only, never speed (the bench itself runs two built checkouts side by side).
import { describe, expect, it } from 'vitest';
import { measureIdle } from '../../bench/idle.js';
import { TSX_FROM_SOURCE } from '../../helpers/child.js';

describe('idle bench', () => {
  it('measures wake-ups, CPU per register and RssAnon of a polling daemon whose metrics are scraped', async () => {
    const source = { label: 'source', entry: [...TSX_FROM_SOURCE, 'test/system/fixtures/cli.ts'], cleanup: () => undefined };
    const [f] = await measureIdle([source], { warmupS: 1, measureS: 4, scrapeEveryS: 1, cloud: true });
    expect(f.label).toBe('source');
    expect(f.wakeupsPerS).toBeGreaterThan(0);
    expect(f.registersPerS).toBeGreaterThan(0);
    expect(f.cpuSPer1000Registers).toBeGreaterThan(0);
    expect(f.rssAnonMb).toBeGreaterThan(1);
    expect(f.failedScrapes).toBe(0);
  }, 180_000);
});
