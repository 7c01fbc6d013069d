// The sparkline rings: bounded, one sample per slot, only the last 15 minutes, numbers only.
import { describe, expect, it } from 'vitest';
import { HISTORY_WINDOW_MS, PointHistory, PointRing } from '../../../src/ops/web/point-history.js';

describe('PointRing', () => {
  it('keeps at most its capacity, oldest first, one sample per slot (the newest in it wins)', () => {
    const ring = new PointRing(10);
    const slot = HISTORY_WINDOW_MS / 10;
    const t0 = 1_000_000;
    ring.add(t0, 1);
    ring.add(t0 + slot / 2, 2);
    expect(ring.since(t0 + slot)).toEqual([[t0, 2]]);
    for (let i = 1; i <= 30; i++) ring.add(t0 + i * slot, i);
    const kept = ring.since(t0 + 30 * slot);
    expect(kept).toHaveLength(10);
    expect(kept.map(([, v]) => v)).toEqual([21, 22, 23, 24, 25, 26, 27, 28, 29, 30]);
  });

  it('leaves out samples older than the window and refuses time going back', () => {
    const ring = new PointRing(100);
    ring.add(0, 1);
    ring.add(HISTORY_WINDOW_MS, 2);
    ring.add(HISTORY_WINDOW_MS - 60_000, 3);
    expect(ring.since(HISTORY_WINDOW_MS + 1)).toEqual([[HISTORY_WINDOW_MS, 2]]);
  });
});

describe('PointHistory', () => {
  it('records finite numbers only, per device, and forgets a removed device', () => {
    const history = new PointHistory(50);
    history.record('m1', 1000, { v: 230.1, on: true, name: 'x', bad: Number.NaN });
    history.record('m2', 1000, { v: 5 });
    expect(history.of('m1', 2000)).toEqual({ v: [[1000, 230.1]] });
    history.forget('m1');
    expect(history.of('m1', 2000)).toEqual({});
    expect(history.of('m2', 2000)).toEqual({ v: [[1000, 5]] });
  });
});
