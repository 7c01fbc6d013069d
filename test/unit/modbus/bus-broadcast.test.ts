// The Bus with a fake line: a broadcast (unit 0, write only) is a request like any other: queued in
// its class, on the line in its turn, holding the line for the turnaround before the next request;
// its frame is unit 0 + the write PDU + CRC; refused before queueing on a Modbus TCP bus or when
// malformed; and the settled listeners hear of it (the share's cache forgets what it wrote).
import { beforeEach, describe, expect, it } from 'vitest';
import { broadcastFrame } from '../../../src/core/modbus/broadcast-frame.js';
import { decodeRtuFrame } from '../../../src/core/modbus/rtu-frame.js';
import type { Operation } from '../../../src/field/modbus/bus-request.js';
import { Bus } from '../../../src/field/modbus/bus.js';
import { InvalidRequestError } from '../../../src/field/modbus/errors.js';
import { silentLogger } from '../../../src/ops/log.js';
import { rtuBusConfig, tcpBusConfig } from '../../helpers/bus-configs.js';
import { FakeTransport } from '../../helpers/fake-transport.js';
import { ManualClock } from '../../helpers/manual-clock.js';

let clock = new ManualClock(1_700_000_000_000);
beforeEach(() => {
  clock = new ManualClock(1_700_000_000_000);
});

async function startedBus(kind: 'rtu' | 'tcp' = 'rtu') {
  const transport = new FakeTransport(clock);
  const config = kind === 'rtu' ? rtuBusConfig({ interFrameDelayMs: 0 }) : tcpBusConfig();
  const bus = new Bus({ config, transportFactory: () => transport, clock, timers: clock, logger: silentLogger() });
  bus.start();
  await clock.advanceAsync(50);
  return { bus, transport };
}

describe('broadcastFrame', () => {
  it.each([
    ['FC6', { kind: 'write-registers' as const, address: 7, values: [0x1234], forceMulti: false }, '0600071234'],
    ['FC16', { kind: 'write-registers' as const, address: 7, values: [1, 2], forceMulti: false }, '10000700020400010002'],
    ['FC16 forced for one value', { kind: 'write-registers' as const, address: 1, values: [5], forceMulti: true }, '1000010001020005'],
    ['FC5 on', { kind: 'write-coils' as const, address: 3, values: [true], forceMulti: false }, '050003ff00'],
    ['FC5 off', { kind: 'write-coils' as const, address: 3, values: [false], forceMulti: false }, '0500030000'],
    ['FC15 bits LSB first', { kind: 'write-coils' as const, address: 0, values: [true, false, true, true, false, false, false, false, true], forceMulti: false }, '0f00000009020d01'],
  ])('%s: unit 0, the request PDU, a good CRC', (_name, write, pduHex) => {
    const frame = broadcastFrame(write);
    const decoded = decodeRtuFrame(frame);
    expect(decoded.ok).toBe(true);
    if (!decoded.ok) return;
    expect(decoded.unit).toBe(0);
    expect(decoded.pdu.toString('hex')).toBe(pduHex);
    expect(frame.length).toBe(1 + pduHex.length / 2 + 2);
  });
});

describe('Bus: broadcast', () => {
  it('goes in its turn, holds the line for the turnaround, and the next request waits for it', async () => {
    const { bus, transport } = await startedBus();
    const poll = bus.read(1, 'holding', 0, 1);
    const sent = bus.broadcast({ kind: 'write-registers', address: 7, values: [42], forceMulti: false }, 150, { priority: 'share' });
    const next = bus.read(2, 'holding', 0, 1);
    let sentAt: number | undefined;
    void sent.then(() => { sentAt = clock.now(); });
    await clock.advanceAsync(1_000);
    await Promise.all([poll, sent, next]);
    expect(transport.calls.map((c) => `${c.unit}:${c.fn}`)).toEqual(['1:readHoldingRegisters', '0:broadcast', '2:readHoldingRegisters']);
    const [, cast, after] = transport.calls;
    expect(cast!.endedAt! - cast!.startedAt).toBe(150);
    expect(after!.startedAt).toBeGreaterThanOrEqual(cast!.endedAt!);
    expect(sentAt).toBe(cast!.endedAt);
    const frame = decodeRtuFrame(transport.broadcasts[0]!);
    expect(frame).toMatchObject({ ok: true, unit: 0 });
    expect(frame.ok && frame.pdu.toString('hex')).toBe('060007002a');
  });

  it('tells the settled listeners what it wrote, and counts a transaction but no unit outcome', async () => {
    const { bus } = await startedBus();
    const heard: Array<[number, Operation]> = [];
    bus.onSettled((unit, op) => heard.push([unit, op]));
    const write = { kind: 'write-coils' as const, address: 3, values: [true, false], forceMulti: false };
    const sent = bus.broadcast(write, 100);
    await clock.advanceAsync(500);
    await sent;
    expect(heard).toEqual([[0, { kind: 'broadcast', write, turnaroundMs: 100 }]]);
    expect(bus.stats().transactions).toBe(1);
    expect(bus.unitState(0).state).not.toBe('cooling-down');
  });

  it('is refused on a Modbus TCP bus before anything is queued', async () => {
    const { bus, transport } = await startedBus('tcp');
    await expect(bus.broadcast({ kind: 'write-registers', address: 0, values: [1], forceMulti: false }, 100)).rejects.toBeInstanceOf(InvalidRequestError);
    expect(transport.calls).toEqual([]);
  });

  it.each([
    ['a turnaround below 0', { kind: 'write-registers' as const, address: 0, values: [1], forceMulti: false }, -1, /turnaround/],
    ['a turnaround too long', { kind: 'write-registers' as const, address: 0, values: [1], forceMulti: false }, 10_001, /turnaround/],
    ['no values', { kind: 'write-registers' as const, address: 0, values: [], forceMulti: false }, 100, /number of values/],
    ['a register value out of range', { kind: 'write-registers' as const, address: 0, values: [70_000], forceMulti: false }, 100, /register value/],
    ['a write past 65535', { kind: 'write-coils' as const, address: 65535, values: [true, true], forceMulti: false }, 100, /past address 65535/],
  ])('refuses %s before queueing', async (_name, write, turnaroundMs, message) => {
    const { bus, transport } = await startedBus();
    await expect(bus.broadcast(write, turnaroundMs)).rejects.toThrow(message);
    expect(transport.calls).toEqual([]);
  });

  it('fails with the port when the line drops during the turnaround', async () => {
    const { bus, transport } = await startedBus();
    const sent = bus.broadcast({ kind: 'write-registers', address: 0, values: [1], forceMulti: false }, 200);
    const failed = expect(sent).rejects.toThrow(/unplugged/);
    await clock.advanceAsync(50);
    transport.drop('device unplugged');
    await failed;
  });
});
