// The Bus with a fake line: a request with a queue deadline (RequestOptions.queueDeadlineMs) that
// has not reached the line by then leaves the queue unsent, counted as `expired`; one that reaches
// it in time goes as usual; requests without a deadline wait their turn. Monotonic time only.
import { beforeEach, describe, expect, it } from 'vitest';
import { Bus } from '../../../src/field/modbus/bus.js';
import { keptFromDevice, RequestExpiredError } from '../../../src/field/modbus/errors.js';
import { exceptionFor } from '../../../src/share/share-service.js';
import { silentLogger } from '../../../src/ops/log.js';
import { rtuBusConfig } from '../../helpers/bus-configs.js';
import { FakeTransport } from '../../helpers/fake-transport.js';
import { ManualClock } from '../../helpers/manual-clock.js';

let clock = new ManualClock(1_000_000);
beforeEach(() => {
  clock = new ManualClock(1_000_000);
});

async function startedBus(latencyMs: number) {
  const transport = new FakeTransport(clock);
  transport.latencyMs = latencyMs;
  const bus = new Bus({ config: rtuBusConfig({ interFrameDelayMs: 0 }), transportFactory: () => transport, clock, timers: clock, logger: silentLogger() });
  bus.start();
  await clock.advanceAsync(50);
  return { bus, transport };
}

function outcome<T>(promise: Promise<T>): Promise<T | string> {
  return promise.catch((err: unknown) => (err instanceof Error ? err.name : String(err)));
}

describe('Bus: queue deadlines', () => {
  it('sends what reaches the line in time and drops, unsent, what waited past its deadline', async () => {
    const { bus, transport } = await startedBus(300);
    const first = outcome(bus.read(1, 'holding', 0, 1));
    // Behind a 300 ms transaction: 500 ms is enough for the first two, not for the third (900 ms).
    const inTime = outcome(bus.read(2, 'holding', 0, 1, { priority: 'share', queueDeadlineMs: 500 }));
    const second = outcome(bus.read(1, 'holding', 1, 1));
    const late = outcome(bus.read(3, 'holding', 0, 1, { priority: 'share', queueDeadlineMs: 500 }));
    const patient = outcome(bus.read(4, 'holding', 0, 1));
    await clock.advanceAsync(3000);
    expect(await first).toMatchObject({ start: 0 });
    expect(await inTime).toMatchObject({ start: 0 });
    expect(await second).toMatchObject({ start: 1 });
    expect(await late).toBe('RequestExpiredError');
    expect(await patient).toMatchObject({ start: 0 });
    expect(transport.calls.map((c) => c.unit)).not.toContain(3);
    expect(bus.stats()).toMatchObject({ expired: 1, queueDepth: 0 });
  });

  it('a wall-clock step does not expire anything (monotonic deadline)', async () => {
    const { bus } = await startedBus(100);
    const first = outcome(bus.read(1, 'holding', 0, 1));
    const waiting = outcome(bus.read(2, 'holding', 0, 1, { priority: 'share', queueDeadlineMs: 500 }));
    clock.stepWall(86_400_000);
    clock.stepWall(-2 * 86_400_000);
    await clock.advanceAsync(1000);
    expect(await first).toMatchObject({ start: 0 });
    expect(await waiting).toMatchObject({ start: 0 });
    expect(bus.stats().expired).toBe(0);
  });

  it('is kept from the device, and a share client hears "server busy"', () => {
    const err = new RequestExpiredError(7, 5012.4);
    expect(err.message).toBe('request to unit 7 left the queue unsent after 5012 ms (its queue deadline)');
    expect(keptFromDevice(err)).toBe(true);
    expect(exceptionFor(err)).toBe(6);
  });
});
