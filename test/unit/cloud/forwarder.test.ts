import { describe, expect, it } from 'vitest';
import { Forwarder, TokenBucket } from '../../../src/cloud/forwarding/forwarder.js';
import { silentLogger } from '../../../src/ops/log.js';
import type { Time } from '../../../src/core/time.js';
import { FakeLink } from '../../helpers/fake-link.js';
import { FakeOutbox } from '../../helpers/fake-outbox.js';
import { eventLoopTurns, ManualClock } from '../../helpers/manual-clock.js';

// Fake time: the forwarder's ack batching and retry timers run only when a test settles.
let clock = new ManualClock();
/** Lets the pump run, then moves past the ack batching delay (10 ms) so acknowledged records are deleted. */
async function settle(): Promise<void> {
  await eventLoopTurns();
  clock.advance(10);
  await eventLoopTurns();
}
const unpaced = { delayFor: () => 0 };

function make(options: { window?: number; readAhead?: number; pacer?: { delayFor(now: number): number }; time?: Time } = {}) {
  clock = new ManualClock();
  const outbox = new FakeOutbox();
  const link = new FakeLink();
  const forwarder = new Forwarder({ device: 'd', outbox, link, log: silentLogger(), pacer: unpaced, time: clock, ...options });
  return { outbox, link, forwarder };
}

describe('Forwarder', () => {
  it('publishes in order, keeps at most `window` in flight, and acks only after PUBACK', async () => {
    const { outbox, link, forwarder } = make({ window: 3 });
    outbox.add('d', '1', '2', '3', '4', '5');
    forwarder.start();
    await settle();
    expect(link.sent).toEqual(['1', '2', '3']);
    expect(outbox.ackedUpTo('d')).toEqual([]);
    link.pending[1].resolve();
    await settle();
    expect(outbox.ackedUpTo('d')).toEqual([]);
    link.pending[0].resolve();
    await settle();
    expect(link.sent).toEqual(['1', '2', '3', '4', '5']);
    // Deletes are batched once per event-loop turn: the ack may land just after the sends.
    await settle();
    expect(outbox.ackedUpTo('d')).toEqual([2]);
    link.ackAll();
    await settle();
    expect(outbox.held('d').length).toBe(0);
    expect(forwarder.stats()).toMatchObject({ published: 5, acked: 5, inFlight: 0 });
  });

  it('sends records committed later when notified', async () => {
    const { outbox, link, forwarder } = make();
    forwarder.start();
    outbox.add('d', 'a');
    forwarder.notify();
    await settle();
    expect(link.sent).toEqual(['a']);
    link.ackAll();
    outbox.add('d', 'b', 'c');
    forwarder.notify();
    await settle();
    expect(link.sent).toEqual(['a', 'b', 'c']);
  });

  it('stops on link down and resends everything not acked after up, in order', async () => {
    const { outbox, link, forwarder } = make({ window: 4 });
    outbox.add('d', '1', '2', '3', '4', '5', '6');
    forwarder.start();
    await settle();
    link.pending[0].resolve();
    await settle();
    expect(outbox.ackedUpTo('d')).toEqual([1]);
    link.goDown();
    outbox.add('d', '7');
    forwarder.notify();
    await settle();
    const sentBefore = link.sent.length;
    link.goUp();
    await settle();
    expect(link.sent.slice(sentBefore)).toEqual(['2', '3', '4', '5']);
    for (let i = 0; i < 3; i += 1) {
      link.ackAll();
      await settle();
    }
    expect(outbox.held('d')).toEqual([]);
    expect(link.sent.slice(sentBefore)).toEqual(['2', '3', '4', '5', '6', '7']);
  });

  it('does nothing while the link is down, and nothing after stop', async () => {
    const { outbox, link, forwarder } = make();
    link.isUp = false;
    outbox.add('d', '1');
    forwarder.start();
    await settle();
    expect(link.sent).toEqual([]);
    forwarder.stop();
    link.goUp();
    forwarder.notify();
    await settle();
    expect(link.sent).toEqual([]);
  });

  it('reads ahead in batches: one outbox query per batch, not per publish', async () => {
    const { outbox, link, forwarder } = make({ window: 2 });
    let peeks = 0;
    const peek = outbox.peek.bind(outbox);
    outbox.peek = (device, limit, afterSeq) => {
      peeks += 1;
      return peek(device, limit, afterSeq);
    };
    outbox.add('d', '1', '2', '3', '4', '5', '6');
    forwarder.start();
    await settle();
    expect(link.sent).toEqual(['1', '2']);
    for (let i = 0; i < 4; i += 1) {
      link.ackAll();
      await settle();
    }
    expect(link.sent).toEqual(['1', '2', '3', '4', '5', '6']);
    // Batches of `window` (2): three that returned records, one that found the outbox empty.
    expect(peeks).toBeLessThanOrEqual(4);
    await settle();
    expect(outbox.held('d')).toEqual([]);
  });

  it('drops the read-ahead on link down: resends from the oldest unacked record, never skipping one', async () => {
    const { outbox, link, forwarder } = make({ window: 2, readAhead: 5 });
    outbox.add('d', '1', '2', '3', '4', '5', '6', '7');
    forwarder.start();
    await settle();
    expect(link.sent).toEqual(['1', '2']);
    link.pending[0].resolve();
    await settle();
    expect(link.sent).toEqual(['1', '2', '3']);
    link.goDown();
    await settle();
    expect(outbox.ackedUpTo('d')).toEqual([1]);
    link.goUp();
    await settle();
    expect(link.sent.slice(3)).toEqual(['2', '3']);
    for (let i = 0; i < 4; i += 1) {
      link.ackAll();
      await settle();
    }
    expect(link.sent.slice(3)).toEqual(['2', '3', '4', '5', '6', '7']);
    await settle();
    expect(outbox.held('d')).toEqual([]);
    // Acks only ever move forward over records that were published and acknowledged.
    expect(outbox.ackedUpTo('d')).toEqual([...outbox.ackedUpTo('d')].sort((a, b) => a - b));
  });

  it('does not ack a later record while an earlier one of the read-ahead is still unacknowledged', async () => {
    const { outbox, link, forwarder } = make({ window: 3, readAhead: 10 });
    outbox.add('d', '1', '2', '3', '4');
    forwarder.start();
    await settle();
    link.pending[2].resolve();
    link.pending[1].resolve();
    await settle();
    expect(outbox.ackedUpTo('d')).toEqual([]);
    expect(outbox.held('d').map((r) => r.payload.toString())).toEqual(['1', '2', '3', '4']);
    link.pending[0].resolve();
    await settle();
    expect(outbox.ackedUpTo('d')).toEqual([3]);
  });

  it('sends records committed after a read-ahead batch once the batch is used up', async () => {
    const { outbox, link, forwarder } = make({ window: 10, readAhead: 2 });
    outbox.add('d', '1', '2');
    forwarder.start();
    await settle();
    outbox.add('d', '3');
    forwarder.notify();
    await settle();
    expect(link.sent).toEqual(['1', '2', '3']);
  });

  it('paces a backlog through the pacer', async () => {
    const { outbox, link, forwarder } = make({ window: 100, pacer: new TokenBucket(10, 2) });
    const start = clock.now();
    outbox.add('d', ...Array.from({ length: 6 }, (_, i) => String(i)));
    forwarder.start();
    await eventLoopTurns();
    expect(link.sent.length).toBe(2);
    for (let i = 0; i < 4; i += 1) {
      expect(clock.sleeping).toBe(1);
      clock.advance(100);
      await eventLoopTurns();
    }
    expect(link.sent.length).toBe(6);
    expect(clock.delays).toEqual([100, 100, 100, 100]);
    expect(clock.now() - start).toBe(400);
    expect(forwarder.stats().paced).toBe(4);
  });
});

describe('TokenBucket', () => {
  it.each([
    [10, 1, [0, 0], [0, 100]],
    [10, 2, [0, 0, 0], [0, 0, 100]],
    [4, 1, [0, 250, 250], [0, 0, 250]],
  ])('rate %d/s burst %d: asks at %j -> delays %j', (rate, burst, times, delays) => {
    const bucket = new TokenBucket(rate, burst);
    expect(times.map((t) => bucket.delayFor(t))).toEqual(delays);
  });
});

describe('Forwarder.quiesce (a device replaced by a reload)', () => {
  it('sends nothing new, waits for the PUBACKs in flight and acks them, so a replacement resends nothing', async () => {
    const { outbox, link, forwarder } = make({ window: 2 });
    outbox.add('d', 'a', 'b', 'c');
    forwarder.start();
    await eventLoopTurns();
    expect(link.sent).toEqual(['a', 'b']);
    const quiet = forwarder.quiesce(5_000);
    await eventLoopTurns();
    link.ackAll();
    clock.advance(10);
    await eventLoopTurns();
    await expect(quiet).resolves.toBe(true);
    forwarder.stop();
    expect(link.sent).toEqual(['a', 'b']);
    const next = new Forwarder({ device: 'd', outbox, link, log: silentLogger(), pacer: unpaced, time: clock });
    next.start();
    await eventLoopTurns();
    expect(link.sent).toEqual(['a', 'b', 'c']);
  });

  it('gives up after its bound and says so (what stays unacked is sent again: at least once)', async () => {
    const { outbox, link, forwarder } = make({ window: 2 });
    outbox.add('d', 'a');
    forwarder.start();
    await eventLoopTurns();
    const quiet = forwarder.quiesce(100);
    for (let i = 0; i < 12; i += 1) {
      clock.advance(10);
      await eventLoopTurns();
    }
    await expect(quiet).resolves.toBe(false);
  });
});
