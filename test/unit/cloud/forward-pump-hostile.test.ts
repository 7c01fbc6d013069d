// The forward pump (forward-pump.ts) against what a peer or the disk may do to it: the broker's
// PUBACK of a message sent before a link restart arriving after it, the outbox failing on read
// (one line logged, a retry each second, forwarding resumes) and its delete failing (logged, the
// pump goes on; the records stay, to be sent again: at least once).
import { describe, expect, it } from 'vitest';
import { Forwarder } from '../../../src/cloud/forwarding/forwarder.js';
import type { OutboxRecord } from '../../../src/core/outbox-types.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { FakeLink } from '../../helpers/fake-link.js';
import { FakeOutbox } from '../../helpers/fake-outbox.js';
import { eventLoopTurns, ManualClock } from '../../helpers/manual-clock.js';

const ioError = () => Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_READ' });

/** An outbox whose reads or deletes throw while told to. */
class FailingOutbox extends FakeOutbox {
  failPeeks = false;
  failAcks = false;
  peeks = 0;
  override peek(device: string, limit: number, afterSeq?: number): OutboxRecord[] {
    this.peeks += 1;
    if (this.failPeeks) throw ioError();
    return super.peek(device, limit, afterSeq);
  }
  override ack(device: string, upToSeq: number): number {
    if (this.failAcks) throw ioError();
    return super.ack(device, upToSeq);
  }
}

function make(window = 4) {
  const clock = new ManualClock();
  const outbox = new FailingOutbox();
  const link = new FakeLink();
  const log = captureLogger();
  const forwarder = new Forwarder({ device: 'd', outbox, link, log: log.logger, pacer: { delayFor: () => 0 }, window, time: clock });
  /** Lets the pump run, then moves past the ack batching delay (10 ms). */
  const settle = async (ms = 10) => {
    await eventLoopTurns();
    clock.advance(ms);
    await eventLoopTurns();
  };
  return { clock, outbox, link, log, forwarder, settle };
}

describe('forward pump, hostile peer and disk', () => {
  it('a PUBACK from before a link restart, arriving after it, acks nothing; the copies sent again are acked', async () => {
    const { outbox, link, forwarder, settle } = make();
    outbox.add('d', '1', '2', '3');
    forwarder.start();
    await settle();
    // The link drops and comes back before the broker's PUBACKs for the first copies arrive.
    const late = link.pending.splice(0);
    link.isUp = false;
    link.emit({ type: 'down', reason: 'test' });
    link.goUp();
    await settle();
    expect(link.sent).toEqual(['1', '2', '3', '1', '2', '3']);
    for (const p of late) p.resolve();
    await settle();
    expect(outbox.acks).toEqual([]);
    expect(forwarder.stats().inFlight).toBe(3);
    link.ackAll();
    await settle();
    expect(outbox.ackedUpTo('d')).toEqual([3]);
    expect(outbox.held('d')).toEqual([]);
    expect(forwarder.stats()).toMatchObject({ published: 6, acked: 3, inFlight: 0 });
  });

  it('the outbox failing on read: "forwarding failed" logged once, a retry each second, everything sent once it reads again', async () => {
    const { outbox, link, log, forwarder, settle } = make();
    outbox.add('d', '1', '2');
    outbox.failPeeks = true;
    forwarder.start();
    for (let i = 0; i < 5; i += 1) await settle(1000);
    expect(link.sent).toEqual([]);
    expect(log.count('forwarding failed')).toBe(1);
    // One read at the start, then one per retry: no tight loop on a failing card.
    expect(outbox.peeks).toBeGreaterThanOrEqual(5);
    expect(outbox.peeks).toBeLessThanOrEqual(6);
    outbox.failPeeks = false;
    await settle(1000);
    expect(link.sent).toEqual(['1', '2']);
    link.ackAll();
    await settle();
    expect(outbox.held('d')).toEqual([]);
    expect(log.count('forwarding failed')).toBe(1);
  });

  it('the outbox failing on delete: logged, later records still go out, and the unacked ones are sent again after a restart', async () => {
    const { outbox, link, log, forwarder, settle } = make();
    outbox.add('d', '1', '2');
    forwarder.start();
    await settle();
    outbox.failAcks = true;
    link.ackAll();
    await settle();
    expect(log.count('outbox ack failed')).toBe(1);
    expect(outbox.held('d').length).toBe(2);
    outbox.add('d', '3');
    forwarder.notify();
    await settle();
    expect(link.sent).toEqual(['1', '2', '3']);
    outbox.failAcks = false;
    link.goDown();
    link.goUp();
    await settle();
    // At least once: what the outbox still holds goes again, in order.
    expect(link.sent).toEqual(['1', '2', '3', '1', '2', '3']);
    link.ackAll();
    await settle();
    expect(outbox.held('d')).toEqual([]);
  });
});
