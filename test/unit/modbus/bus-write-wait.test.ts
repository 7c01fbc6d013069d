// Cloud work waits for a unit that is cooling down or guarded against a late reply (issue 28), on
// manual time with a scripted transport: it stays queued up to `writes.maxWaitMs`, goes as soon as
// the unit may be asked (the cool-down's probe, the guard's end), and past its wait fails with the
// bus's reason and how long it waited. Polls are still refused at once.
import { beforeEach, describe, expect, it } from 'vitest';
import type { BusConfig } from '../../../src/core/config/site-types.js';
import { Bus } from '../../../src/field/modbus/bus.js';
import { UnitCoolingDownError, UnitLateReplyPendingError } from '../../../src/field/modbus/errors.js';
import { silentLogger } from '../../../src/ops/log.js';
import { rtuBusConfig, tcpBusConfig } from '../../helpers/bus-configs.js';
import { FakeTransport } from '../../helpers/fake-transport.js';
import { ManualClock } from '../../helpers/manual-clock.js';

let clock = new ManualClock(1_700_000_000_000);
beforeEach(() => {
  clock = new ManualClock(1_700_000_000_000);
});

class LateReportingTransport extends FakeTransport {
  onLateReply(): void {
    // RTU framing: the bus guards units that time out
  }
}

async function startedBus(config: BusConfig) {
  const transport = new LateReportingTransport(clock);
  const bus = new Bus({ config, transportFactory: () => transport, clock, timers: clock, logger: silentLogger() });
  bus.start();
  await clock.advanceAsync(50);
  return { bus, transport };
}

const settle = <T>(promise: Promise<T>) => promise.then((v) => v, (err: unknown) => err);

/** Unit 2 times out once (with afterTimeouts 1: it cools down; on RTU framing: it is guarded). */
async function timeOut(bus: Bus, transport: FakeTransport): Promise<void> {
  transport.behaviour = () => 'timeout';
  const timedOut = settle(bus.read(2, 'holding', 0, 2));
  await clock.advanceAsync(150);
  expect((await timedOut as Error).name).toBe('ModbusTimeoutError');
}
const COOLDOWN = { afterTimeouts: 1, initialMs: 1000, maxMs: 1000 };

describe('cloud work waits for a cooling or guarded unit', () => {
  it('a write during a cool-down waits and goes as its probe; a poll meanwhile is refused at once', async () => {
    const { bus, transport } = await startedBus(tcpBusConfig({ timeoutMs: 100, cooldown: COOLDOWN }));
    await timeOut(bus, transport);
    expect(bus.unitState(2).state).toBe('cooling-down');
    transport.behaviour = () => 'ok';
    let done = false;
    const write = settle(bus.writeRegisters(2, 10, [5])).then((v) => { done = true; return v; });
    expect(await settle(bus.read(2, 'holding', 0, 2))).toBeInstanceOf(UnitCoolingDownError);
    await clock.advanceAsync(500);
    expect(done).toBe(false);
    expect(transport.calls.filter((c) => c.fn === 'writeRegister')).toHaveLength(0);
    await clock.advanceAsync(600); // the cool-down ends: the write is its probe
    expect(await write).toBeUndefined();
    expect(bus.unitState(2).state).toBe('ok');
  });

  it('past writes.maxWaitMs the write fails with the reason and how long it waited', async () => {
    const { bus, transport } = await startedBus(tcpBusConfig({ timeoutMs: 100, cooldown: COOLDOWN, writes: { maxWaitMs: 300 } }));
    await timeOut(bus, transport);
    transport.behaviour = () => 'ok';
    const write = settle(bus.writeRegisters(2, 10, [5]));
    await clock.advanceAsync(400);
    const err = await write;
    expect(err).toBeInstanceOf(UnitCoolingDownError);
    expect((err as Error).message).toMatch(/^unit 2 is cooling down after repeated timeouts \(no answer within 100 ms\) \(next probe in \d+ ms\); the request waited 300 ms in the queue \(writes\.maxWaitMs\)$/);
    expect(transport.calls.filter((c) => c.fn === 'writeRegister')).toHaveLength(0);
  });

  it('a write during a late-reply guard goes when the guard ends; other units are served meanwhile', async () => {
    const { bus, transport } = await startedBus(rtuBusConfig({ timeoutMs: 100, lateReplyGuardMs: 2000, cooldown: { afterTimeouts: 5, initialMs: 1000, maxMs: 1000 } }));
    transport.behaviour = (unit) => (unit === 2 ? 'timeout' : 'ok');
    const timedOut = settle(bus.read(2, 'holding', 0, 2));
    await clock.advanceAsync(150);
    expect((await timedOut as Error).name).toBe('ModbusTimeoutError');
    transport.behaviour = () => 'ok';
    let done = false;
    const write = settle(bus.writeCoils(2, 1, [true])).then((v) => { done = true; return v; });
    expect(await settle(bus.read(2, 'holding', 0, 2))).toBeInstanceOf(UnitLateReplyPendingError);
    const other = settle(bus.read(1, 'holding', 0, 2));
    await clock.advanceAsync(100);
    expect(await other).toMatchObject({ words: Uint16Array.from([0, 1]) });
    await clock.advanceAsync(1500);
    expect(done).toBe(false);
    await clock.advanceAsync(500);
    expect(await write).toBeUndefined();
    expect(bus.stats().queueDepth).toBe(0);
  });

  it('maxWaitMs 0 refuses at once, as before', async () => {
    const { bus, transport } = await startedBus(tcpBusConfig({ timeoutMs: 100, cooldown: COOLDOWN, writes: { maxWaitMs: 0 } }));
    await timeOut(bus, transport);
    expect(await settle(bus.writeRegisters(2, 10, [5]))).toBeInstanceOf(UnitCoolingDownError);
  });

  it('the bus stopping fails a waiting write at once', async () => {
    const { bus, transport } = await startedBus(tcpBusConfig({ timeoutMs: 100, cooldown: COOLDOWN }));
    await timeOut(bus, transport);
    const write = settle(bus.writeRegisters(2, 10, [5]));
    await bus.stop();
    expect((await write as Error).name).toBe('BusStoppedError');
  });
});
