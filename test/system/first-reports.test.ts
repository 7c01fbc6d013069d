// The first reports after a start (and so after an upgrade's restart) leave in the order of their
// poll times: `online: true` and then the values of the cycle that found the device answering, both
// stamped with that cycle's start (timestampAttribute). The daemon from source against mosquitto
// and the simulator; the subscriber sees what the broker passed on, in its order.
import { afterEach, describe, expect, it } from 'vitest';
import { DeliveryRig, settle } from './delivery-rig.js';

describe('first reports after a start', () => {
  let rig: DeliveryRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it('online: true, then the first values, in poll-time order, at a start and at a restart', async () => {
    rig = await DeliveryRig.start();
    const r = rig;
    for (const start of ['start', 'restart']) {
      const from = r.stamped.length;
      const gateway = r.startGateway();
      await settle(() => r.stamped.length >= from + 5, 60_000);
      const first = r.stamped.slice(from, from + 5);
      console.log(`first reports after the ${start}: ${first.map((m) => `${m.what} @${m.ts - first[0].ts} ms`).join(', ')}`);
      expect(first.slice(0, 2).map((m) => m.what), start).toEqual(['online: true', 'seq']);
      // The online report carries the start of the cycle whose values follow it: never later than them.
      expect(first[1].ts - first[0].ts, `${start}: ts of the values minus ts of online: true`).toBe(0);
      expect(first.every((m, i) => i === 0 || m.ts >= first[i - 1].ts), start).toBe(true);
      const { exitCode } = await r.stopAndCount(gateway);
      expect(exitCode).toBe(0);
    }
  }, 180_000);
});
