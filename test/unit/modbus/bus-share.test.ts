// The Bus with a fake line: cloud ('high') work bounded to its share of bus time while polls
// wait, and a bit write done as one job (no request between its read and its write).
import { beforeEach, describe, expect, it } from 'vitest';
import { Bus } from '../../../src/field/modbus/bus.js';
import { silentLogger } from '../../../src/ops/log.js';
import { rtuBusConfig } from '../../helpers/bus-configs.js';
import { FakeTransport } from '../../helpers/fake-transport.js';
import { ManualClock } from '../../helpers/manual-clock.js';

// Manual time: the bus's timers and the fake line's latency run only when a test advances it.
let clock = new ManualClock(1_700_000_000_000);
beforeEach(() => {
  clock = new ManualClock(1_700_000_000_000);
});

async function startedBus(highShare: number) {
  const transport = new FakeTransport(clock);
  const bus = new Bus({ config: rtuBusConfig({ interFrameDelayMs: 0 }), transportFactory: () => transport, clock, timers: clock, logger: silentLogger(), highShare });
  bus.start();
  await clock.advanceAsync(50);
  return { bus, transport };
}

describe('Bus: share of cloud work while polls wait', () => {
  it.each([
    [1, 1],
    [0.5, 10],
    [0.25, 15],
  ])('highShare %f: polls among the first 20 transactions >= %i', async (share, minPolls) => {
    const { bus, transport } = await startedBus(share);
    const polls = Array.from({ length: 20 }, () => bus.read(1, 'holding', 0, 1));
    const cloud = Array.from({ length: 40 }, () => bus.read(9, 'holding', 0, 1, { priority: 'high' }));
    await clock.advanceAsync(10_000);
    await Promise.all([...polls, ...cloud]);
    const first = transport.calls.slice(0, 20).filter((c) => c.unit === 1).length;
    expect(first).toBeGreaterThanOrEqual(minPolls);
    // Bounded, not starved: cloud work still gets its turn while polls wait.
    if (share < 1) expect(transport.calls.slice(0, 20).some((c) => c.unit === 9)).toBe(true);
    expect(transport.calls).toHaveLength(60);
  });
});

describe('Bus: bit write as one job', () => {
  it('nothing runs between the read and the write of a bit write', async () => {
    const { bus, transport } = await startedBus(1);
    const first = bus.read(2, 'input', 0, 1);
    const bitA = bus.writeBit(9, 30, 0, true);
    const poll = bus.read(3, 'input', 0, 1);
    const bitB = bus.writeBit(9, 30, 1, true, { forceMulti: true });
    await clock.advanceAsync(5_000);
    await Promise.all([first, bitA, poll, bitB]);
    expect(transport.calls.map((c) => `${c.unit}:${c.fn}`)).toEqual([
      '2:readInputRegisters',
      '9:readHoldingRegisters', '9:writeRegister',
      '9:readHoldingRegisters', '9:writeRegisters',
      '3:readInputRegisters',
    ]);
    expect(bus.stats().transactions).toBe(6);
  });

  it.each([-1, 16, 1.5])('refuses bit %f before queueing', async (bit) => {
    const { bus, transport } = await startedBus(1);
    await expect(bus.writeBit(9, 30, bit, true)).rejects.toThrow(/bit must be an integer from 0 to 15/);
    expect(transport.calls).toEqual([]);
  });
});

describe('Bus: the share class (other masters through a bus share)', () => {
  it('takes about lineShare of the line while polls wait, and is not starved', async () => {
    const { bus, transport } = await startedBus(1);
    bus.setLineShare(0.25);
    const polls = Array.from({ length: 20 }, () => bus.read(1, 'holding', 0, 1));
    const shared = Array.from({ length: 40 }, () => bus.read(9, 'holding', 0, 1, { priority: 'share' }));
    await clock.advanceAsync(10_000);
    await Promise.all([...polls, ...shared]);
    const first = transport.calls.slice(0, 20);
    expect(first.filter((c) => c.unit === 1).length).toBeGreaterThanOrEqual(14);
    expect(first.some((c) => c.unit === 9)).toBe(true);
    expect(transport.calls).toHaveLength(60);
  });

  it('tells settled-request listeners of reads and writes; a failing listener fails no request', async () => {
    const { bus } = await startedBus(1);
    const heard: string[] = [];
    bus.onSettled(() => { throw new Error('listener fault'); });
    const stop = bus.onSettled((unit, op) => heard.push(`${unit}:${op.kind}`));
    const read = bus.read(1, 'holding', 0, 2);
    const write = bus.writeRegisters(2, 5, [7]);
    await clock.advanceAsync(1000);
    await expect(read).resolves.toMatchObject({ table: 'holding', start: 0 });
    await expect(write).resolves.toBeUndefined();
    stop();
    const later = bus.read(1, 'holding', 0, 1);
    await clock.advanceAsync(1000);
    await later;
    expect(heard).toEqual(['1:read', '2:write-registers']);
  });

  it('tells them of a write that failed too (its reply lost: the device may hold the value), with the error', async () => {
    const { bus, transport } = await startedBus(1);
    transport.behaviour = (unit) => (unit === 2 ? 'timeout' : 'ok');
    const heard: string[] = [];
    bus.onSettled((unit, op, outcome) => heard.push(`${unit}:${op.kind}:${outcome.ok ? 'ok' : (outcome.error as Error).name}`));
    const write = bus.writeRegisters(2, 5, [7]).catch((err: unknown) => err);
    const read = bus.read(2, 'holding', 0, 1).catch((err: unknown) => err);
    await clock.advanceAsync(5000);
    await Promise.all([write, read]);
    expect(heard).toEqual(['2:write-registers:ModbusTimeoutError', '2:read:ModbusTimeoutError']);
  });
});
