// The gateway killed with SIGKILL mid-stream: every report committed to its outbox before the kill
// arrives after the restart (at least once, in order), then the live ones.
import { afterEach, describe, expect, it } from 'vitest';
import { DeliveryRig, firstArrivals, outOfOrder, settle, sleep } from './delivery-rig.js';

describe('gateway killed with SIGKILL', () => {
  let rig: DeliveryRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  /** Restart the gateway on the same state and check that nothing committed went missing. */
  async function restartAndCheck(r: DeliveryRig, label: string, atKill: number[]): Promise<void> {
    const second = r.startGateway();
    const lastAtKill = Math.max(0, ...r.outbox.seen);
    await settle(() => r.received.some((v) => v > lastAtKill + 100), 30_000);
    r.outbox.sample();
    const committed = [...r.outbox.seen];
    await settle(() => r.missing(committed).length === 0, 30_000);
    const count = await r.stopAndCount(second);
    const unique = firstArrivals(r.received);
    console.log(`${label}: ${count.committed} reports committed over both runs, ${count.acked} acked, ${count.messages} messages delivered; `
      + `${atKill.length} unacked in the outbox at the kill, `
      + `${r.received.length} delivered (${unique.length} distinct, ${r.received.length - unique.length} redelivered), `
      + `${r.missing(atKill).length} of the unacked missing, ${r.missing(committed).length} of ${committed.length} committed missing`);
    expect(r.missing(atKill)).toEqual([]);
    expect(r.missing(committed)).toEqual([]);
    expect(outOfOrder(r.received)).toEqual([]);
    expect(unique.at(-1)).toBeGreaterThan(lastAtKill);
    // Every row the broker acknowledged reached the subscriber: none was acked and then lost.
    expect(count.messages).toBeGreaterThanOrEqual(count.acked);
    expect(count.exitCode).toBe(0);
  }

  it('while reporting live: reports delivered but not yet acked are sent again after the restart', async () => {
    rig = await DeliveryRig.start();
    const r = rig;
    const first = r.startGateway();
    await settle(() => r.received.length >= 10, 30_000);
    // Publishes keep reaching the broker (and the subscriber); their PUBACKs are held back, so
    // the kill finds them in flight.
    r.pipe.holdBrokerReplies(true);
    await sleep(1500);
    first.child.kill('SIGKILL');
    await first.exited;
    r.pipe.holdBrokerReplies(false);
    r.outbox.sample();
    const atKill = r.outbox.pending();
    expect(atKill.length, 'reports in flight at the kill').toBeGreaterThan(5);
    await restartAndCheck(r, 'kill -9 live', atKill);
  }, 120_000);

  it('with a backlog (broker away): the whole backlog is replayed in order', async () => {
    rig = await DeliveryRig.start();
    const r = rig;
    const first = r.startGateway();
    await settle(() => r.received.length >= 10, 30_000);
    await r.broker.stop();
    await sleep(1500);
    first.child.kill('SIGKILL');
    await first.exited;
    r.outbox.sample();
    const atKill = r.outbox.pending();
    expect(atKill.length, 'a backlog was built').toBeGreaterThan(10);
    await r.broker.restart();
    await restartAndCheck(r, 'kill -9 with backlog', atKill);
  }, 120_000);
});
