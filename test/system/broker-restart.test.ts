// The broker stopped for ~2 s and restarted mid-stream while the device keeps being polled: every
// report the gateway committed before and during the outage arrives at least once, in order.
import { afterEach, describe, expect, it } from 'vitest';
import { DeliveryRig, firstArrivals, outOfOrder, settle, sleep } from './delivery-rig.js';

describe('broker restart mid-stream', () => {
  let rig: DeliveryRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it('delivers every committed report, in order, after the broker comes back', async () => {
    rig = await DeliveryRig.start();
    const r = rig;
    const gateway = r.startGateway();
    await settle(() => r.received.length >= 20, 30_000);
    expect(r.received.length, 'reports before the fault').toBeGreaterThanOrEqual(20);

    await r.broker.stop();
    // With the broker gone nothing more is acked: what arrived plus what waits is all there was.
    const unackedAtFault = r.outbox.pending();
    const receivedAtFault = firstArrivals(r.received);
    await sleep(2000);
    const backlogAtRestart = r.outbox.pending();
    await r.broker.restart();

    // Recovered once a second of live reports past the outage backlog has arrived.
    const lastOfBacklog = backlogAtRestart.at(-1) ?? 0;
    await settle(() => r.received.some((v) => v > lastOfBacklog + 100), 30_000);
    r.outbox.sample();
    const committed = [...r.outbox.seen];
    await settle(() => r.missing(committed).length === 0, 30_000);

    const count = await r.stopAndCount(gateway);
    const unique = firstArrivals(r.received);
    console.log(`broker restart: ${count.committed} reports committed, ${count.acked} acked, ${count.messages} messages delivered; `
      + `${receivedAtFault.length} delivered before the fault, `
      + `${unackedAtFault.length} unacked at the fault, ${backlogAtRestart.length} in the outbox at the restart, `
      + `${r.received.length} delivered in all (${unique.length} distinct, ${r.received.length - unique.length} redelivered), `
      + `${r.missing(committed).length} of ${committed.length} committed missing`);
    expect(backlogAtRestart.length, 'the outage built a backlog').toBeGreaterThan(10);
    expect(r.missing([...unackedAtFault, ...backlogAtRestart])).toEqual([]);
    expect(r.missing(committed)).toEqual([]);
    expect(outOfOrder(r.received)).toEqual([]);
    // Every row the broker acknowledged reached the subscriber: none was acked and then lost.
    expect(count.messages).toBeGreaterThanOrEqual(count.acked);
    expect(count.exitCode).toBe(0);
  }, 120_000);
});
