// Late and busy units on a bus (issue 18), on manual time with a scripted transport: after a
// timeout on RTU framing the unit is not asked again until its late reply was seen or the guard
// ran out, other units keep the line; "busy" is repeated off the line; both lead to cool-down.
import { beforeEach, describe, expect, it } from 'vitest';
import type { BusConfig } from '../../../src/core/config/site-types.js';
import { Bus } from '../../../src/field/modbus/bus.js';
import { ModbusExceptionError, ModbusTimeoutError, UnitLateReplyPendingError } from '../../../src/field/modbus/errors.js';
import { rtuBusConfig, tcpBusConfig } from '../../helpers/bus-configs.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { FakeTransport } from '../../helpers/fake-transport.js';
import { ManualClock } from '../../helpers/manual-clock.js';

let clock = new ManualClock(1_700_000_000_000);
beforeEach(() => {
  clock = new ManualClock(1_700_000_000_000);
});

/** A transport on RTU framing: it reports late replies, as the modbus-serial adapter does. */
class LateReportingTransport extends FakeTransport {
  private lateListeners: Array<(unit: number, answeredAfterMs: number) => void> = [];
  onLateReply(listener: (unit: number, answeredAfterMs: number) => void): void {
    this.lateListeners.push(listener);
  }
  lateReply(unit: number, answeredAfterMs: number): void {
    for (const listener of this.lateListeners) listener(unit, answeredAfterMs);
  }
}

/** Its timeouts name the read's shape, as the RTU transport's do: the guard holds back that shape only. */
class ShapedTimeouts extends LateReportingTransport {
  override async readHoldingRegisters(unit: number, start: number, count: number, timeoutMs: number): Promise<Uint16Array> {
    try {
      return await super.readHoldingRegisters(unit, start, count, timeoutMs);
    } catch (err) {
      if (err instanceof ModbusTimeoutError) throw new ModbusTimeoutError(unit, timeoutMs, { functionCode: 3, quantity: count });
      throw err;
    }
  }
}

async function startedBus(config: BusConfig, transport = new LateReportingTransport(clock)) {
  const log = captureLogger();
  const bus = new Bus({ config, transportFactory: () => transport, clock, timers: clock, logger: log.logger });
  bus.start();
  await clock.advanceAsync(50);
  return { bus, transport, log };
}

const settle = <T>(promise: Promise<T>) => promise.then((v) => v, (err: unknown) => err);

describe('late replies on RTU framing', () => {
  it('guards a unit that timed out for 10x its timeout by default, serving the others meanwhile', async () => {
    const { bus, transport } = await startedBus(rtuBusConfig({ timeoutMs: 100, cooldown: { afterTimeouts: 5, initialMs: 1000, maxMs: 1000 } }));
    transport.behaviour = (unit) => (unit === 2 ? 'timeout' : 'ok');
    const first = settle(bus.read(2, 'holding', 0, 2));
    await clock.advanceAsync(200);
    expect((await first as Error).name).toBe('ModbusTimeoutError');
    transport.behaviour = () => 'ok';
    const guarded = await settle(bus.read(2, 'holding', 0, 2));
    expect(guarded).toBeInstanceOf(UnitLateReplyPendingError);
    expect((guarded as UnitLateReplyPendingError).retryInMs).toBeGreaterThan(700);
    const other = settle(bus.read(1, 'holding', 0, 2));
    await clock.advanceAsync(50);
    expect(await other).toMatchObject({ words: Uint16Array.from([0, 1]) });
    await clock.advanceAsync(1000); // the guard (10 x 100 ms after the timeout) is over
    const again = settle(bus.read(2, 'holding', 0, 2));
    await clock.advanceAsync(50);
    expect(await again).toMatchObject({ words: Uint16Array.from([0, 1]) });
    expect(bus.stats()).toMatchObject({ lateGuardRejects: 1, lateReplies: 0, lateUnits: [] });
  });

  it('tells the transport how long each guard lasts (one deadline), and logs a whole unit held back', async () => {
    class Watching extends ShapedTimeouts {
      readonly watched: Array<{ unit: number; quantity: number; guardMs: number }> = [];
      watchLateReplyFor(unit: number, request: { functionCode: number; quantity: number }, guardMs: number): void {
        this.watched.push({ unit, quantity: request.quantity, guardMs });
      }
    }
    const transport = new Watching(clock);
    // No repeat after a timeout here (timeout-repeats.ts): one transaction per timed-out read.
    const { bus, log } = await startedBus(rtuBusConfig({ timeoutMs: 100, timeoutRepeats: 0, cooldown: { afterTimeouts: 5, initialMs: 1000, maxMs: 1000 } }), transport);
    const held = () => log.lines().filter((l) => l.msg === 'unit held back by the late-reply guard');
    transport.behaviour = () => 'timeout';
    const first = settle(bus.read(2, 'holding', 0, 2));
    await clock.advanceAsync(200);
    expect(await first).toBeInstanceOf(ModbusTimeoutError);
    expect(transport.watched).toEqual([{ unit: 2, quantity: 2, guardMs: 1000 }]);
    expect(held()).toEqual([]); // never seen late: polled on meanwhile (other shapes, split reads)
    transport.lateReply(2, 1500);
    const second = settle(bus.read(2, 'holding', 0, 2));
    await clock.advanceAsync(200);
    expect(await second).toBeInstanceOf(ModbusTimeoutError);
    expect(transport.watched[1]).toEqual({ unit: 2, quantity: 2, guardMs: 3000 }); // learned: twice its slowest answer
    expect(held()).toMatchObject([{ level: 30, unit: 2, guardMs: 3000 }]);
    transport.behaviour = () => 'ok';
    await clock.advanceAsync(3000); // bounded by the guard's own length
    const again = settle(bus.read(2, 'holding', 0, 2));
    await clock.advanceAsync(50);
    expect(await again).toMatchObject({ words: Uint16Array.from([0, 1]) });
  });

  it('lets the unit be asked again once its late reply was seen, counts it, warns once per unit', async () => {
    const { bus, transport, log } = await startedBus(rtuBusConfig({ timeoutMs: 300, lateReplyGuardMs: 60_000, cooldown: { afterTimeouts: 5, initialMs: 1000, maxMs: 1000 } }));
    for (let round = 0; round < 2; round += 1) {
      transport.behaviour = () => 'timeout';
      const timedOut = settle(bus.read(2, 'holding', 0, 2));
      await clock.advanceAsync(400);
      expect(await timedOut).toMatchObject({ name: 'ModbusTimeoutError' });
      expect(await settle(bus.read(2, 'holding', 0, 2))).toBeInstanceOf(UnitLateReplyPendingError);
      transport.lateReply(2, 1000 + round * 500);
      transport.behaviour = () => 'ok';
      const served = settle(bus.read(2, 'holding', 0, 2));
      await clock.advanceAsync(50);
      expect(await served).toMatchObject({ words: Uint16Array.from([0, 1]) });
    }
    expect(bus.stats()).toMatchObject({ lateReplies: 2, lateUnits: [{ unit: 2, lateReplies: 2, slowestAnswerMs: 1500 }] });
    const warnings = log.lines().filter((l) => String(l.msg).startsWith('unit answers after its timeout'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, unit: 2, answeredAfterMs: 1000, timeoutMs: 300 });
  });

  it('counts late replies as failures: a unit late every other time cools down', async () => {
    const { bus, transport } = await startedBus(rtuBusConfig({ timeoutMs: 100, cooldown: { afterTimeouts: 3, initialMs: 5000, maxMs: 5000 } }));
    for (let round = 0; round < 2; round += 1) {
      transport.behaviour = () => 'timeout';
      const late = settle(bus.read(2, 'holding', 0, 1));
      await clock.advanceAsync(200);
      await late;
      transport.lateReply(2, 250);
      transport.behaviour = () => 'ok';
      const good = settle(bus.read(2, 'holding', 0, 1));
      await clock.advanceAsync(50);
      await good;
    }
    expect(bus.unitState(2).state).toBe('cooling-down');
  });

  it('does not guard on Modbus TCP (transaction ids tell late replies apart)', async () => {
    const { bus, transport } = await startedBus(tcpBusConfig({ timeoutMs: 100 }));
    transport.behaviour = () => 'timeout';
    const first = settle(bus.read(2, 'holding', 0, 1));
    await clock.advanceAsync(200);
    await first;
    const second = settle(bus.read(2, 'holding', 0, 1));
    await clock.advanceAsync(200);
    expect(await second).toMatchObject({ name: 'ModbusTimeoutError' });
  });
});

describe('busy units', () => {
  it.each([6, 5])('repeats exception %i off the line: another unit is served between the attempts', async (code) => {
    const { bus, transport } = await startedBus(rtuBusConfig({ busyRetries: 2 }));
    let busyLeft = 2;
    transport.behaviour = (unit) => (unit === 2 && busyLeft-- > 0 ? { exception: code } : 'ok');
    const busy = settle(bus.read(2, 'holding', 0, 1));
    await clock.advanceAsync(15); // the first attempt answered busy
    const other = settle(bus.read(1, 'holding', 0, 1));
    await clock.advanceAsync(1000);
    expect(await busy).toMatchObject({ words: Uint16Array.from([0]) });
    expect(await other).toMatchObject({ words: Uint16Array.from([0]) });
    expect(transport.calls.map((c) => c.unit)).toEqual([2, 1, 2, 2]);
    expect(bus.stats()).toMatchObject({ busyRetries: 2, exceptions: 0 });
  });

  it('a unit busy to the last repeat, read after read, enters cool-down', async () => {
    const { bus, transport } = await startedBus(rtuBusConfig({ busyRetries: 1, cooldown: { afterTimeouts: 2, initialMs: 5000, maxMs: 5000 } }));
    transport.behaviour = () => ({ exception: 6 });
    for (let i = 0; i < 2; i += 1) {
      const read = settle(bus.read(3, 'holding', 0, 1));
      await clock.advanceAsync(500);
      expect(await read).toBeInstanceOf(ModbusExceptionError);
    }
    expect(bus.unitState(3).state).toBe('cooling-down');
    expect(await settle(bus.read(3, 'holding', 0, 1))).toMatchObject({ name: 'UnitCoolingDownError' });
  });

  it('fails a request waiting to repeat when the bus stops', async () => {
    const { bus, transport } = await startedBus(rtuBusConfig({ busyRetries: 3 }));
    transport.behaviour = () => ({ exception: 6 });
    const read = settle(bus.read(3, 'holding', 0, 1));
    await clock.advanceAsync(15);
    await bus.stop();
    expect(await read).toMatchObject({ name: 'BusStoppedError' });
  });
});

describe('the late-reply guard learns', () => {
  it('a read-length probe goes whole or not at all: refused while its shape is held, where a poll goes as pieces', async () => {
    const transport = new ShapedTimeouts(clock);
    const { bus } = await startedBus(rtuBusConfig({ timeoutMs: 100, timeoutRepeats: 0, cooldown: { afterTimeouts: 5, initialMs: 1000, maxMs: 1000 } }), transport);
    transport.behaviour = () => 'timeout';
    const first = settle(bus.read(2, 'holding', 0, 8));
    await clock.advanceAsync(150);
    expect(await first).toBeInstanceOf(ModbusTimeoutError);
    transport.behaviour = () => 'ok';
    const before = transport.calls.length;
    const reads = () => transport.calls.slice(before).map((c) => `${c.address}`);
    expect(await settle(bus.read(2, 'holding', 0, 8, { lengthProbe: true }))).toBeInstanceOf(UnitLateReplyPendingError);
    const shorter = settle(bus.read(2, 'holding', 0, 7, { lengthProbe: true }));
    await clock.advanceAsync(100);
    expect(await shorter).toMatchObject({ start: 0 });
    const poll = settle(bus.read(2, 'holding', 0, 8));
    await clock.advanceAsync(100);
    expect(await poll).toMatchObject({ start: 0 });
    expect(reads()).toEqual(['0', '0', '4']); // the 7-register probe whole, the poll as halves
    // The guard ran out, and so did its second length: no timeout here names its address, so no
    // answer of the identical request could settle it sooner (late-guard.ts).
    await clock.advanceAsync(2000);
    const whole = settle(bus.read(2, 'holding', 0, 8, { lengthProbe: true }));
    await clock.advanceAsync(100);
    expect(await whole).toMatchObject({ start: 0 });
    expect(reads()).toEqual(['0', '0', '4', '0']);
  });

  it('lengthens the guard of a unit seen answering later than it, within 6x the configured guard', async () => {
    const { bus, transport } = await startedBus(rtuBusConfig({ timeoutMs: 100, cooldown: { afterTimeouts: 10, initialMs: 1000, maxMs: 1000 } }));
    const timeOut = async () => {
      transport.behaviour = () => 'timeout';
      const read = settle(bus.read(2, 'holding', 0, 1));
      await clock.advanceAsync(150);
      await read;
      return bus.lateUnits().find((u) => u.unit === 2)?.guardedUntil ?? 0;
    };
    const first = await timeOut();
    expect(first - clock.now()).toBeLessThanOrEqual(1000); // 10 x timeoutMs
    transport.lateReply(2, 2500); // slower than the guard: seen because no one asked unit 2 meanwhile
    expect(bus.lateUnits()).toEqual([{ unit: 2, lateReplies: 1, slowestAnswerMs: 2500 }]);
    const second = await timeOut();
    expect(second - clock.now()).toBeGreaterThan(4900); // 2 x 2500 ms, less the 50 ms since the timeout
    transport.lateReply(2, 60_000);
    const third = await timeOut();
    expect(third - clock.now()).toBeLessThanOrEqual(6000); // capped at 6 x the configured guard
    expect(third - clock.now()).toBeGreaterThan(5900);
  });
});
