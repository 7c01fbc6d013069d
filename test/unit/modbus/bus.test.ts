import { beforeEach, describe, expect, it } from 'vitest';
import type { BusConfig } from '../../../src/core/config/site-types.js';
import { Bus, type BusOptions } from '../../../src/field/modbus/bus.js';
import {
  BusStoppedError, InvalidRequestError, ModbusExceptionError,
} from '../../../src/field/modbus/errors.js';
import { QueueFullError } from '../../../src/core/queue-full-error.js';
import { rtuBusConfig, tcpBusConfig } from '../../helpers/bus-configs.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { FakeTransport } from '../../helpers/fake-transport.js';
import { ManualClock } from '../../helpers/manual-clock.js';

// Manual time: the bus's timers and the fake line's latency run only when a test advances it.
let clock = new ManualClock(1_700_000_000_000);
beforeEach(() => {
  clock = new ManualClock(1_700_000_000_000);
});

async function startedBus(config: BusConfig = rtuBusConfig(), options: Partial<BusOptions> = {}) {
  const transport = new FakeTransport(clock);
  const log = captureLogger();
  const bus = new Bus({ config, transportFactory: () => transport, clock, timers: clock, logger: log.logger, random: () => 0.5, ...options });
  bus.start();
  await clock.advanceAsync(50); // open, then the inter-frame silence after open
  return { bus, transport, log };
}

describe('Bus turn-taking on an RTU line', () => {
  it('runs exactly one transaction at a time, in arrival order, with the inter-frame silence kept', async () => {
    const { bus, transport } = await startedBus(rtuBusConfig({ interFrameDelayMs: 5 }));
    const units = [1, 2, 3];
    const reads = [];
    for (let round = 0; round < 10; round += 1) {
      for (const unit of units) reads.push(bus.read(unit, 'holding', round * 10, 4));
    }
    await clock.advanceAsync(10_000);
    const blocks = await Promise.all(reads);

    expect(blocks).toHaveLength(30);
    expect(blocks[4]?.words).toEqual(Uint16Array.from([10, 11, 12, 13]));
    expect(transport.maxInFlight).toBe(1);
    expect(transport.calls.map((c) => c.unit)).toEqual(reads.map((_, i) => units[i % 3]));
    for (let i = 1; i < transport.calls.length; i += 1) {
      const previous = transport.calls[i - 1];
      const current = transport.calls[i];
      expect(current!.startedAt - previous!.endedAt!).toBeGreaterThanOrEqual(5);
    }
    expect(bus.stats()).toMatchObject({ transactions: 30, queueDepth: 0, inFlight: 0, busyTimeMs: 300 });
  });

  it('lets writes jump ahead of queued polls, FIFO within each priority', async () => {
    const { bus, transport } = await startedBus();
    const polls = [1, 2, 3, 4].map((unit) => bus.read(unit, 'input', 0, 2));
    const write = bus.writeRegisters(9, 100, [42]);
    const command = bus.writeCoils(8, 5, [true]);
    await clock.advanceAsync(5_000);
    await Promise.all([...polls, write, command]);
    // The first poll was already on the wire when the write arrived.
    expect(transport.calls.map((c) => `${c.unit}:${c.fn}`)).toEqual([
      '1:readInputRegisters', '9:writeRegister', '8:writeCoil',
      '2:readInputRegisters', '3:readInputRegisters', '4:readInputRegisters',
    ]);
  });


  it('runs raw stream bytes in the line\'s turn, ahead of polls, whatever the units\' cool-down', async () => {
    const { bus, transport } = await startedBus(rtuBusConfig({ timeoutMs: 100, cooldown: { afterTimeouts: 1, initialMs: 60_000, maxMs: 60_000 } }));
    transport.behaviour = (unit) => (unit === 0 ? 'ok' : 'timeout');
    const failed = bus.read(1, 'holding', 0, 1).catch((err: unknown) => err);
    await clock.advanceAsync(500);
    expect(bus.unitState(1)).toMatchObject({ state: 'cooling-down' });
    const polls = [2, 3].map((unit) => bus.read(unit, 'holding', 0, 1).catch((err: unknown) => err));
    const window = { replyTimeoutMs: 50, quietMs: 10, maxReplyBytes: 64 };
    const reply = bus.exchangeRaw(Buffer.from('ABC'), window);
    await clock.advanceAsync(5_000);
    expect((await reply).toString()).toBe('CBA');
    await Promise.all([failed, ...polls]);
    expect(transport.calls.map((c) => `${c.unit}:${c.fn}`)).toEqual(['1:readHoldingRegisters', '2:readHoldingRegisters', '0:raw', '3:readHoldingRegisters']);
    expect(transport.maxInFlight).toBe(1);
    expect(bus.unitState(0)).toMatchObject({ state: 'ok' });
  });
  it('chooses FC6/FC16 and FC5/FC15 by length and forceMulti', async () => {
    const { bus, transport } = await startedBus();
    const done = Promise.all([
      bus.writeRegisters(1, 0, [1]),
      bus.writeRegisters(1, 0, [1], { forceMulti: true }),
      bus.writeRegisters(1, 0, [1, 2]),
      bus.writeCoils(1, 0, [true]),
      bus.writeCoils(1, 0, [true], { forceMulti: true }),
    ]);
    await clock.advanceAsync(5_000);
    await done;
    expect(transport.calls.map((c) => c.fn)).toEqual([
      'writeRegister', 'writeRegisters', 'writeRegisters', 'writeCoil', 'writeCoils',
    ]);
  });

  it('returns bit tables as booleans cut to the requested count', async () => {
    const { bus } = await startedBus();
    const coils = bus.read(1, 'coil', 0, 3);
    await clock.advanceAsync(100);
    expect(await coils).toEqual({ table: 'coil', start: 0, bits: [true, false, true] });
  });
});

describe('Bus on Modbus TCP', () => {
  it('honours maxInFlight', async () => {
    const { bus, transport } = await startedBus(tcpBusConfig({ maxInFlight: 4 }));
    const reads = Array.from({ length: 12 }, (_, i) => bus.read(1 + (i % 6), 'holding', 0, 1));
    await clock.advanceAsync(1_000);
    await Promise.all(reads);
    expect(transport.maxInFlight).toBe(4);
  });

  it('never overlaps two requests to one unit, while other units use the free slots', async () => {
    const { bus, transport } = await startedBus(tcpBusConfig({ maxInFlight: 4 }));
    // Unit 1's requests come first and would fill every slot if only the total were checked.
    const reads = [
      ...Array.from({ length: 8 }, (_, i) => bus.read(1, 'holding', i, 1)),
      ...Array.from({ length: 6 }, (_, i) => bus.read(2 + (i % 3), 'holding', i, 1)),
    ];
    await clock.advanceAsync(2_000);
    const blocks = await Promise.all(reads);
    expect(blocks.slice(0, 8).map((b) => b.words?.[0])).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(transport.maxInFlightPerUnit(1)).toBe(1);
    for (const unit of [2, 3, 4]) expect(transport.maxInFlightPerUnit(unit)).toBe(1);
    expect(transport.maxInFlight).toBe(4);
    // Unit 1 kept its order and did not wait for all the others: its turn came between theirs.
    const order = transport.calls.map((c) => c.unit);
    expect(order.indexOf(2)).toBeLessThan(order.lastIndexOf(1));
  });

  it('lets a unit configured as concurrent have several requests in flight', async () => {
    const { bus, transport } = await startedBus(tcpBusConfig({ maxInFlight: 4 }), { concurrentUnits: new Set([1]) });
    const reads = Array.from({ length: 8 }, (_, i) => bus.read(1, 'holding', i, 1));
    await clock.advanceAsync(1_000);
    await Promise.all(reads);
    expect(transport.maxInFlightPerUnit(1)).toBe(4);
  });
});

describe('Bus silent for too long', () => {
  it('reopens the port once no unit gave a good reply for reopenAfterSilenceMs, logs it once, and counts it', async () => {
    const config = { ...tcpBusConfig({ timeoutMs: 200 }), reopenAfterSilenceMs: 1_000, cooldown: { afterTimeouts: 100, initialMs: 5_000, maxMs: 5_000 } };
    const { bus, transport, log } = await startedBus(config);
    transport.behaviour = () => 'timeout';
    const opensBefore = transport.openCalls.length;
    for (let i = 0; i < 30; i += 1) {
      const read = bus.read(1, 'holding', 0, 1).catch((err: unknown) => err);
      await clock.advanceAsync(250);
      await read;
    }
    const stats = bus.stats();
    expect(stats.silenceReopens).toBeGreaterThanOrEqual(2);
    expect(transport.openCalls.length - opensBefore).toBe(stats.silenceReopens);
    expect(log.count('bus silent, reopening')).toBe(1);
    expect(bus.progress()).toEqual({ goodReplies: 0, expected: true });

    transport.behaviour = () => 'ok';
    const read = bus.read(1, 'holding', 7, 1);
    await clock.advanceAsync(100);
    expect((await read).words).toEqual(Uint16Array.from([7]));
    expect(bus.progress()).toEqual({ goodReplies: 1, expected: false });
    expect(log.count('bus answering again')).toBe(1);
  });

  it('does not expect progress while every unit is legitimately cooling down', async () => {
    const config = { ...tcpBusConfig({ timeoutMs: 100 }), cooldown: { afterTimeouts: 2, initialMs: 5_000, maxMs: 5_000 } };
    const { bus, transport } = await startedBus(config);
    transport.behaviour = () => 'timeout';
    const first = bus.read(1, 'holding', 0, 1).catch((err: unknown) => err);
    await clock.advanceAsync(150);
    await first;
    expect(bus.progress().expected).toBe(true); // failing, not yet in cool-down
    const second = bus.read(1, 'holding', 0, 1).catch((err: unknown) => err);
    await clock.advanceAsync(150);
    await second;
    expect(bus.unitState(1).state).toBe('cooling-down');
    expect(bus.progress().expected).toBe(false);
  });
});

describe('Bus errors', () => {
  it('retries "slave device busy" up to busyRetries, then succeeds', async () => {
    const { bus, transport } = await startedBus(rtuBusConfig({ busyRetries: 3 }));
    let busyLeft = 2;
    transport.behaviour = () => (busyLeft-- > 0 ? { exception: 6 } : 'ok');
    const read = bus.read(1, 'holding', 0, 1);
    await clock.advanceAsync(2_000);
    await expect(read).resolves.toMatchObject({ words: Uint16Array.from([0]) });
    expect(bus.stats()).toMatchObject({ transactions: 3, busyRetries: 2, exceptions: 0 });
  });

  it('gives up after busyRetries and surfaces the busy exception', async () => {
    const { bus, transport } = await startedBus(rtuBusConfig({ busyRetries: 1 }));
    transport.behaviour = () => ({ exception: 6 });
    const read = bus.read(1, 'holding', 0, 1);
    const settled = read.catch((err: unknown) => err);
    await clock.advanceAsync(2_000);
    const err = await settled;
    expect(err).toBeInstanceOf(ModbusExceptionError);
    expect(err).toMatchObject({ code: 6, isBusy: true });
    expect(bus.stats()).toMatchObject({ transactions: 2, busyRetries: 1, exceptions: 1 });
  });

  it('surfaces other exceptions typed, without a cool-down (the unit is alive)', async () => {
    const { bus, transport } = await startedBus();
    transport.behaviour = () => ({ exception: 2 });
    const settled = bus.read(1, 'holding', 9999, 1).catch((err: unknown) => err);
    await clock.advanceAsync(100);
    const err = await settled;
    expect(err).toBeInstanceOf(ModbusExceptionError);
    expect(err).toMatchObject({ code: 2, exceptionName: 'Illegal data address' });
    expect((err as Error).message).toBe('unit 1 answered with Modbus exception 2 (Illegal data address)');
    expect(bus.unitState(1).state).toBe('ok');
  });

  it.each([
    ['unit 256', 256, 0, 1, /unit must be an integer from 0 to 255/],
    ['count 0', 1, 0, 0, /count \(holding\) must be an integer from 1 to 125/],
    ['count 126', 1, 0, 126, /from 1 to 125, got 126/],
    ['past 65535', 1, 65530, 10, /past address 65535/],
    ['fractional start', 1, 1.5, 1, /start address must be an integer/],
  ])('rejects bad arguments before queueing: %s', async (_name, unit, start, count, message) => {
    const { bus, transport } = await startedBus();
    await expect(bus.read(unit, 'holding', start, count)).rejects.toThrow(message);
    await expect(bus.read(unit, 'holding', start, count)).rejects.toBeInstanceOf(InvalidRequestError);
    expect(transport.calls).toHaveLength(0);
  });

  it('rejects out-of-range register values on write', async () => {
    const { bus } = await startedBus();
    await expect(bus.writeRegisters(1, 0, [70000])).rejects.toThrow('register value [0] must be an integer from 0 to 65535');
  });
});

describe('Bus queue bound and stop', () => {
  it('rejects with QueueFullError beyond the limit, logged once', async () => {
    const { bus, log } = await startedBus(rtuBusConfig(), { queueLimit: 3 });
    const accepted = [1, 2, 3, 4].map((unit) => bus.read(unit, 'holding', 0, 1)); // 1 on the wire + 3 queued
    const rejected = [5, 6].map((unit) => bus.read(unit, 'holding', 0, 1));
    for (const p of rejected) await expect(p).rejects.toBeInstanceOf(QueueFullError);
    expect(bus.stats()).toMatchObject({ queueDepth: 3, queueRejects: 2 });
    expect(log.count('bus queue full')).toBe(1);
    await clock.advanceAsync(1_000);
    await Promise.all(accepted);
  });

  it('fails queued requests with BusStoppedError on stop and refuses new ones', async () => {
    const { bus } = await startedBus();
    const reads = [1, 2, 3].map((unit) => bus.read(unit, 'holding', 0, 1).catch((err: unknown) => err));
    await bus.stop();
    const errors = await Promise.all(reads);
    expect(errors.slice(1).every((err) => err instanceof BusStoppedError)).toBe(true);
    await expect(bus.read(1, 'holding', 0, 1)).rejects.toBeInstanceOf(BusStoppedError);
  });

  it('queues requests made while the port is still opening', async () => {
    const transport = new FakeTransport(clock);
    const bus = new Bus({ config: rtuBusConfig(), transportFactory: () => transport, clock, timers: clock, logger: captureLogger().logger });
    bus.start();
    const read = bus.read(1, 'holding', 0, 1);
    await clock.advanceAsync(100);
    await expect(read).resolves.toMatchObject({ start: 0 });
  });
});
