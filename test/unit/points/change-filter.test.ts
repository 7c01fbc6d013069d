import { describe, expect, it } from 'vitest';
import type { ReportConfig } from '../../../src/core/config/site-types.js';
import { ChangeFilter } from '../../../src/core/points/change-filter.js';
import type { PointValue } from '../../../src/core/points/types.js';

const CHANGE: ReportConfig = { mode: 'change', deadband: 0, deadbandKind: 'absolute', maxSilenceMs: 0 };

/** Offers `values` one second apart and returns which were sent. */
function run(report: Partial<ReportConfig>, values: PointValue[], stepMs = 1000): boolean[] {
  const filter = new ChangeFilter([{ id: 'p', report: { ...CHANGE, ...report } }]);
  return values.map((value, i) => filter.offer('p', value, i * stepMs));
}

describe('ChangeFilter', () => {
  it.each<{ name: string; report: Partial<ReportConfig>; values: PointValue[]; sent: boolean[] }>([
    { name: 'first value is always sent', report: {}, values: [5], sent: [true] },
    { name: 'unchanged values are held back', report: {}, values: [5, 5, 5], sent: [true, false, false] },
    { name: 'any change passes with deadband 0', report: {}, values: [5, 5.001, 5.001, 5], sent: [true, true, false, true] },
    { name: 'absolute deadband', report: { deadband: 0.5 }, values: [10, 10.4, 10.5, 10.6, 10.2, 10.0], sent: [true, false, false, true, false, true] },
    { name: 'moving exactly the band is not beyond it', report: { deadband: 0.1 }, values: [1.0, 1.1, 1.2], sent: [true, false, true] },
    { name: 'deadband is measured from the last SENT value (creep)', report: { deadband: 1 }, values: [0, 0.6, 1.2, 1.8, 2.4], sent: [true, false, true, false, true] },
    { name: 'percent deadband of the last sent magnitude', report: { deadband: 10, deadbandKind: 'percent' }, values: [100, 109, 111, 100, 123], sent: [true, false, true, false, true] },
    { name: 'percent deadband on negative values', report: { deadband: 10, deadbandKind: 'percent' }, values: [-100, -91, -89], sent: [true, false, true] },
    { name: 'percent deadband from zero: any change passes', report: { deadband: 50, deadbandKind: 'percent' }, values: [0, 0, 0.01], sent: [true, false, true] },
    { name: 'always mode sends every time', report: { mode: 'always', deadband: 100 }, values: [1, 1, 1], sent: [true, true, true] },
    { name: 'booleans compare by equality', report: { deadband: 5 }, values: [true, true, false, false, true], sent: [true, false, true, false, true] },
    { name: 'strings compare by equality', report: { deadband: 5 }, values: ['a', 'a', 'b', 'b'], sent: [true, false, true, false] },
    { name: 'a change of kind is a change', report: { deadband: 1e30 }, values: [9007199254740991, '9007199254740992', '9007199254740992'], sent: [true, true, false] },
    { name: 'NaN is a change from a number and equal to NaN', report: { deadband: 5 }, values: [1, Number.NaN, Number.NaN, 1], sent: [true, true, false, true] },
    { name: '0 and -0 are equal', report: {}, values: [0, -0], sent: [true, false] },
    { name: 'heartbeat after max silence', report: { maxSilenceMs: 3000 }, values: [7, 7, 7, 7, 7, 7, 7], sent: [true, false, false, true, false, false, true] },
    { name: 'a change restarts the silence timer', report: { maxSilenceMs: 3000 }, values: [7, 7, 8, 8, 8, 8], sent: [true, false, true, false, false, true] },
    { name: 'heartbeat also applies to held-back deadband values', report: { deadband: 1, maxSilenceMs: 2000 }, values: [7, 7.5, 7.5], sent: [true, false, true] },
  ])('$name', ({ report, values, sent }) => {
    expect(run(report, values)).toEqual(sent);
  });

  it('forceSnapshot makes the next offer of every point send, once', () => {
    const filter = new ChangeFilter([{ id: 'a', report: CHANGE }, { id: 'b', report: { ...CHANGE, deadband: 10 } }]);
    expect([filter.offer('a', 1, 0), filter.offer('b', 1, 0)]).toEqual([true, true]);
    expect([filter.offer('a', 1, 1), filter.offer('b', 2, 1)]).toEqual([false, false]);
    filter.forceSnapshot();
    expect([filter.offer('a', 1, 2), filter.offer('b', 2, 2)]).toEqual([true, true]);
    expect([filter.offer('a', 1, 3), filter.offer('b', 2, 3)]).toEqual([false, false]);
  });

  it('forget makes only that point send its next value', () => {
    const filter = new ChangeFilter([{ id: 'a', report: CHANGE }, { id: 'b', report: CHANGE }]);
    filter.offer('a', 1, 0);
    filter.offer('b', 1, 0);
    filter.forget('a');
    expect([filter.offer('a', 1, 1), filter.offer('b', 1, 1)]).toEqual([true, false]);
  });

  it('sends when the clock steps backwards instead of going silent', () => {
    const filter = new ChangeFilter([{ id: 'p', report: { ...CHANGE, maxSilenceMs: 60_000 } }]);
    expect(filter.offer('p', 1, 1_000_000)).toBe(true);
    expect(filter.offer('p', 1, 5_000)).toBe(true);
    expect(filter.offer('p', 1, 6_000)).toBe(false);
  });

  it('forgetAll makes every point send its next value, and forgetting before any send is harmless', () => {
    const filter = new ChangeFilter([{ id: 'a', report: CHANGE }, { id: 'b', report: CHANGE }]);
    filter.forgetAll();
    filter.forget('a');
    expect([filter.offer('a', 1, 0), filter.offer('b', 1, 0)]).toEqual([true, true]);
    expect([filter.offer('a', 1, 1), filter.offer('b', 1, 1)]).toEqual([false, false]);
    filter.forgetAll();
    expect([filter.offer('a', 1, 2), filter.offer('b', 1, 2)]).toEqual([true, true]);
  });

  it('keeps its own state when devices share one point list', () => {
    const points = [{ id: 'a', report: CHANGE }, { id: 'b', report: { ...CHANGE, mode: 'always' as const } }];
    const [one, two] = [new ChangeFilter(points), new ChangeFilter(points)];
    expect([one.offer('a', 1, 0), one.offer('a', 1, 1)]).toEqual([true, false]);
    expect([two.offer('a', 1, 1), two.offer('a', 2, 2), one.offer('a', 1, 2)]).toEqual([true, true, false]);
    two.forceSnapshot();
    expect([two.offer('a', 2, 3), one.offer('a', 1, 3)]).toEqual([true, false]);
    expect([one.offer('b', 1, 4), one.offer('b', 1, 5)]).toEqual([true, true]);
  });

  it('takes the settings of the last entry of a repeated id', () => {
    const filter = new ChangeFilter([{ id: 'p', report: CHANGE }, { id: 'p', report: { ...CHANGE, deadband: 10 } }]);
    expect([filter.offer('p', 1, 0), filter.offer('p', 5, 1), filter.offer('p', 12, 2)]).toEqual([true, false, true]);
  });

  it('sends values of unknown points (no settings to filter by)', () => {
    const filter = new ChangeFilter([]);
    expect([filter.offer('ghost', 1, 0), filter.offer('ghost', 1, 1)]).toEqual([true, true]);
  });
});
