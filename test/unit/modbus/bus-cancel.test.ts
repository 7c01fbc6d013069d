// The Bus with a fake line: requests whose owner cancels them (RequestOptions.signal). A waiting
// one leaves the queue (or its pause before a repeat after "busy") and never reaches the line; one
// on the line finishes its transaction but sends no further one; nothing of a gone owner stays.
import { beforeEach, describe, expect, it } from 'vitest';
import { Bus } from '../../../src/field/modbus/bus.js';
import { RequestCancelledError } from '../../../src/field/modbus/errors.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { rtuBusConfig } from '../../helpers/bus-configs.js';
import { FakeTransport } from '../../helpers/fake-transport.js';
import { ManualClock } from '../../helpers/manual-clock.js';

let clock = new ManualClock(1_700_000_000_000);
beforeEach(() => {
  clock = new ManualClock(1_700_000_000_000);
});

async function startedBus() {
  const transport = new FakeTransport(clock);
  const log = captureLogger();
  const bus = new Bus({ config: rtuBusConfig({ interFrameDelayMs: 0 }), transportFactory: () => transport, clock, timers: clock, logger: log.logger });
  bus.start();
  await clock.advanceAsync(50);
  return { bus, transport, log };
}

/** Settles `promise` into a value or the error's class name, without an unhandled rejection. */
function outcome<T>(promise: Promise<T>): Promise<T | string> {
  return promise.catch((err: unknown) => (err instanceof Error ? err.name : String(err)));
}

describe('Bus: requests cancelled by their owner', () => {
  it('takes a queued request out before it reaches the line, counted, not logged', async () => {
    const { bus, transport, log } = await startedBus();
    const owner = new AbortController();
    const first = outcome(bus.read(1, 'holding', 0, 1, { priority: 'share', signal: owner.signal }));
    const queued = Array.from({ length: 8 }, (_, i) => outcome(bus.read(1, 'holding', 10 + i, 1, { priority: 'share', signal: owner.signal })));
    const poll = outcome(bus.read(2, 'holding', 0, 1));
    expect(bus.stats().queueDepth).toBe(9); // the first is on the line
    owner.abort();
    expect(bus.stats().queueDepth).toBe(1); // only the poll waits
    await clock.advanceAsync(1000);
    // The one on the line finished with its result; the queued ones never went out.
    expect(await first).toMatchObject({ table: 'holding', start: 0 });
    expect(await Promise.all(queued)).toEqual(Array.from({ length: 8 }, () => 'RequestCancelledError'));
    expect(await poll).toMatchObject({ start: 0 });
    expect(transport.calls.map((c) => `${c.unit}:${c.address}`)).toEqual(['1:0', '2:0']);
    expect(bus.stats()).toMatchObject({ cancelled: 8, queueDepth: 0 });
    expect(bus.ownersWaiting).toBe(0);
    expect(log.lines().filter((l) => Number(l.level) >= 40)).toEqual([]);
  });

  it('refuses at once a request whose owner already left', async () => {
    const { bus, transport } = await startedBus();
    const owner = new AbortController();
    owner.abort();
    await expect(bus.writeRegisters(1, 0, [5], { signal: owner.signal })).rejects.toBeInstanceOf(RequestCancelledError);
    await clock.advanceAsync(100);
    expect(transport.calls).toEqual([]);
    expect(bus.stats()).toMatchObject({ cancelled: 1, queueDepth: 0 });
  });

  it('a bit write whose owner leaves during its read sends no write', async () => {
    const { bus, transport } = await startedBus();
    const owner = new AbortController();
    const write = outcome(bus.writeBit(3, 30, 1, true, { signal: owner.signal }));
    await clock.advanceAsync(5);
    expect(transport.inFlight).toBe(1);
    owner.abort();
    await clock.advanceAsync(1000);
    expect(await write).toBe('RequestCancelledError');
    expect(transport.calls.map((c) => c.fn)).toEqual(['readHoldingRegisters']);
    // The unit answered: its owner's leaving says nothing about its health.
    expect(bus.unitState(3).state).not.toBe('cooling-down');
    expect(bus.stats()).toMatchObject({ cancelled: 1, timeouts: 0, otherErrors: 0 });
  });

  it('drops a request pausing before its repeat after "busy"', async () => {
    const { bus, transport } = await startedBus();
    transport.behaviour = () => ({ exception: 6 });
    const owner = new AbortController();
    const read = outcome(bus.read(4, 'holding', 0, 1, { priority: 'share', signal: owner.signal }));
    await clock.advanceAsync(15);
    expect(transport.calls).toHaveLength(1);
    owner.abort();
    await clock.advanceAsync(5000);
    expect(await read).toBe('RequestCancelledError');
    expect(transport.calls).toHaveLength(1);
    expect(bus.ownersWaiting).toBe(0);
  });

  it('keeps no owner once its requests settled, and never listens twice on one signal', async () => {
    const { bus } = await startedBus();
    const owner = new AbortController();
    let listeners = 0;
    const add = owner.signal.addEventListener.bind(owner.signal);
    owner.signal.addEventListener = ((...args: Parameters<typeof add>) => { listeners += 1; add(...args); }) as typeof add;
    const reads = Array.from({ length: 50 }, (_, i) => bus.read(1, 'holding', i, 1, { priority: 'share', signal: owner.signal }));
    expect(bus.ownersWaiting).toBe(1);
    expect(listeners).toBe(1);
    await clock.advanceAsync(5000);
    await Promise.all(reads);
    expect(bus.ownersWaiting).toBe(0);
    // Aborting later touches nothing.
    owner.abort();
    expect(bus.stats().cancelled).toBe(0);
  });
});
