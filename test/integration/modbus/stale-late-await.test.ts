// An awaited late reply expires with its guard (issue 39): RTU at the defaults (1 s poll, 1000 ms
// timeout, 10 s guard) against a raw device on a socat pty. A lost read and then one of its guard
// pieces lost too leave two late replies awaited; once the bus's guard of both has run out, the
// device answers one read "busy" (exception 6) and later loses one frame. The busy answer must be
// the read's own (repeated as busy answers are), never the "late reply" of the long-gone piece,
// and the lost frame costs at most 2 samples, as any lost frame does.
import { describe, expect, it } from 'vitest';
import type { Sample } from '../../../src/device/poller.js';
import { type LossScript, runLostFrames } from '../../helpers/lost-frames.js';
import type { TrapAnswer } from '../../helpers/trap-peer.js';

const UNIT = 1;
const WHOLE = 4; // the device's one read: 4 registers

describe('a late reply awaited past its guard', () => {
  it('a busy answer after the guard ran out is repeated, the next lost frame costs at most 2 samples', async () => {
    let phase: 'first-loss' | 'piece-loss' | 'guarded' | 'busy-repeat' | 'after-busy' | 'done' = 'first-loss';
    let lastLossAt = Number.POSITIVE_INFINITY;
    let readsAfterBusy = 0;
    const script: LossScript = (request, index, bus): TrapAnswer => {
      switch (phase) {
        case 'first-loss':
          if (index < 3) return { afterMs: 0 };
          phase = 'piece-loss';
          return 'silent';
        case 'piece-loss':
          if (request.quantity === WHOLE) return { afterMs: 0 };
          phase = 'guarded'; // a piece of the split read, lost too: its late reply is awaited
          return 'silent';
        case 'guarded': {
          // Busy only once the bus guards nothing of the unit any more (both guards ran out).
          const guarded = bus.lateUnits().some((u) => u.unit === UNIT && u.guardedUntil !== undefined);
          if (guarded || request.quantity !== WHOLE) return { afterMs: 0 };
          phase = 'busy-repeat';
          return { afterMs: 0, exception: 6 };
        }
        case 'busy-repeat':
          phase = 'after-busy';
          return { afterMs: 0 };
        case 'after-busy':
          readsAfterBusy += 1;
          if (readsAfterBusy < 2) return { afterMs: 0 };
          phase = 'done';
          lastLossAt = request.at;
          return 'silent';
        case 'done':
          return { afterMs: 0 };
      }
    };
    const after = (samples: readonly Sample[]) => samples.filter((s) => s.ts > lastLossAt);
    const result = await runLostFrames({ lose: { script }, samples: 40, minLost: 3, done: (samples) => after(samples).length >= 4 });
    expect(result.lostFrames).toBe(3);
    expect(result.stats.busyRetries).toBe(1);
    expect(result.stats.lateReplies).toBe(0);
    expect(result.wrongValues).toBe(0);
    expect(result.offlineTransitions).toEqual([]);
    // Samples lost to the last lost frame: the gaps from the last sample before it on.
    const times = result.sampleTimes;
    const from = times.findIndex((ts) => ts > lastLossAt) - 1;
    let lost = 0;
    for (let i = Math.max(1, from + 1); i < times.length; i += 1) lost += Math.max(0, Math.round(((times[i] as number) - (times[i - 1] as number)) / 1000) - 1);
    expect(lost).toBeLessThanOrEqual(2);
  }, 180_000);
});
