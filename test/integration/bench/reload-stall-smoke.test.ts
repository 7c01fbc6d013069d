// Keeps the reload-stall bench working: a small site read again and planned, checked for
// correctness only (the one changed device replaced, the timer ran), never speed.
import { describe, expect, it } from 'vitest';
import { measureReloadStall } from '../../bench/reload-stall.js';

describe('reload-stall bench', () => {
  it('reads a site again as a reload does and plans replacing the one changed device', async () => {
    const stall = await measureReloadStall(20);
    expect(stall.replaced).toEqual(['dev-1']);
    expect(stall.readMs).toBeGreaterThan(0);
    expect(stall.gaps.every((gap) => gap.ms > 20 && gap.cpuMs >= 0)).toBe(true);
  }, 60_000);
});
