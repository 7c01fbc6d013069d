// A burst of inbound messages holds the event loop for at most one slice per turn, then waits for
// the loop to turn; writes are held during a turn and released at its end; order is kept and
// nothing is dropped.
import { describe, expect, it } from 'vitest';
import { InboundPacer } from '../../../src/cloud/mqtt/inbound-pacer.js';

function pacer(sliceMs: number) {
  let now = 0;
  const deferred: Array<() => void> = [];
  const writes: string[] = [];
  const p = new InboundPacer({ hold: () => writes.push('hold'), release: () => writes.push('release') }, sliceMs, () => now, (next) => deferred.push(next));
  return { p, deferred, writes, advance: (ms: number) => { now += ms; }, turnLoop: () => deferred.splice(0).forEach((next) => next()) };
}

describe('InboundPacer', () => {
  it('lets a burst run for one slice per turn, then waits for the loop to turn, in order', () => {
    const { p, deferred, writes, advance, turnLoop } = pacer(2);
    const handled: number[] = [];
    const handle = (i: number): void => {
      advance(0.5); // each message costs 0.5 ms
      p.handled(() => {
        handled.push(i);
        if (i < 9) handle(i + 1);
      });
    };
    handle(0);
    // The slice starts when the first message is handled: it and the next three (ending 0.5, 1.0
    // and 1.5 ms into the slice) pass; the one ending 2 ms in waits for the loop to turn.
    expect(handled).toEqual([0, 1, 2, 3]);
    expect(deferred).toHaveLength(1);
    expect(writes).toEqual(['hold']);
    turnLoop();
    expect(writes.slice(0, 3)).toEqual(['hold', 'release', 'hold']);
    while (deferred.length > 0) turnLoop();
    expect(handled).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(p.yields).toBeGreaterThanOrEqual(2);
    expect(writes.filter((w) => w === 'hold')).toHaveLength(writes.filter((w) => w === 'release').length);
  });

  it('never makes a message wait when messages come one per turn', () => {
    const { p, deferred, advance, turnLoop } = pacer(2);
    let handled = 0;
    for (let i = 0; i < 100; i += 1) {
      advance(10);
      p.handled(() => { handled += 1; });
      turnLoop();
    }
    expect(handled).toBe(100);
    expect(deferred).toHaveLength(0);
    expect(p.yields).toBe(0);
  });
});
