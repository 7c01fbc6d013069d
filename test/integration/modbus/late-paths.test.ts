// No reply becomes a value unless it answers the request on the line, whatever path the request
// took (issue 28): a raw device on a socat pty answers a timed-out read late, with a frame of the
// same unit, function and length as the request then on the line (the busy repeat of a poll, a
// poll, a cloud read, a write's read-back) or during a raw stream exchange. The late frame is
// counted in `lateReplies` and never decoded; the request on the line gets its own reply.
import { afterEach, describe, expect, it } from 'vitest';
import { ModbusTimeoutError, UnitLateReplyPendingError } from '../../../src/field/modbus/errors.js';
import { BusDeviceIo } from '../../../src/device/device-io.js';
import { systemTimers } from '../../../src/core/time.js';
import { deviceConfig } from '../../helpers/device-configs.js';
import type { TrapPeerOptions } from '../../helpers/trap-peer.js';
import { UNIT, X, Y, lateScript, settle, startLateRig, truthWords as truth } from '../../helpers/late-path-rig.js';
import { waitFor } from '../../helpers/wait.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const rig = (timeoutMs: number, peerOptions: TrapPeerOptions) => startLateRig(cleanups, timeoutMs, peerOptions);
const script = (lateMs: number, busyFirst: boolean) => lateScript(lateMs, { busyFirst });

describe('the busy-repeat trap: a poll answered "busy", a cloud read of the same shape timing out meanwhile', () => {
  it.each([
    ['a short timeout', 300, 450, undefined],
    ['the defaults, the reply 1.3 s late', 1000, 1300, undefined],
    ['a device that queues requests and answers in order', 1000, 1300, { gapMs: 44 }],
  ] as const)('%s: the repeat gets its own reply, the late one is counted', async (_name, timeoutMs, lateMs, queueing) => {
    const { bus, peer } = await rig(timeoutMs, { answer: script(lateMs, true), ...(queueing ? { queueing } : {}) });
    const poll = settle(bus.read(UNIT, 'holding', X, 2));
    await waitFor(() => peer.requests.length >= 1, { what: 'the poll on the line' });
    const cloudRead = settle(bus.read(UNIT, 'holding', Y, 2, { priority: 'high' }));
    expect(await cloudRead).toBeInstanceOf(ModbusTimeoutError);
    expect(await poll).toEqual({ table: 'holding', start: X, words: truth(X, 2) });
    await waitFor(() => bus.stats().lateReplies >= 1, { what: 'the late reply counted' });
    expect(bus.stats()).toMatchObject({ busyRetries: 1, lateReplies: 1 });
    expect(bus.lateUnits()).toMatchObject([{ unit: UNIT, lateReplies: 1 }]);
  }, 30_000);
});

describe('a late reply of the same shape while another request of the unit is on the line', () => {
  it('a poll right after a timed-out poll', async () => {
    const { bus } = await rig(300, { answer: script(450, false) });
    expect(await settle(bus.read(UNIT, 'holding', Y, 2))).toBeInstanceOf(ModbusTimeoutError);
    expect(await bus.read(UNIT, 'holding', X, 2)).toMatchObject({ words: truth(X, 2) });
    expect(await bus.read(UNIT, 'holding', X, 2)).toMatchObject({ words: truth(X, 2) });
    await waitFor(() => bus.stats().lateReplies === 1, { what: 'the late reply counted' });
  }, 30_000);

  it('a cloud read (device I/O at write priority)', async () => {
    const { bus, peer } = await rig(300, { answer: script(450, false) });
    const io = new BusDeviceIo(bus, deviceConfig({ name: 'meter', unitId: UNIT, points: [] }), systemTimers);
    expect(await settle(bus.read(UNIT, 'holding', Y, 2))).toBeInstanceOf(ModbusTimeoutError);
    const reads = [];
    for (let i = 0; i < 4; i += 1) reads.push(await io.read('holding', X, 2));
    for (const block of reads) expect(block.words).toEqual(truth(X, 2));
    await waitFor(() => bus.stats().lateReplies === 1, { what: 'the late reply counted' });
    expect(peer.requests.some((r) => r.address === X && r.quantity === 1)).toBe(true); // split while Y was due
  }, 30_000);

  it('a write and its read-back', async () => {
    const { bus } = await rig(300, { answer: script(450, false) });
    const io = new BusDeviceIo(bus, deviceConfig({ name: 'meter', unitId: UNIT, points: [] }), systemTimers);
    expect(await settle(bus.read(UNIT, 'holding', Y, 2))).toBeInstanceOf(ModbusTimeoutError);
    await io.write({ kind: 'registers', address: X, words: [7, 8] });
    expect((await io.read('holding', X, 2)).words).toEqual(Uint16Array.from([7, 8]));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await io.read('holding', X, 2)).words).toEqual(Uint16Array.from([7, 8]));
    await waitFor(() => bus.stats().lateReplies === 1, { what: 'the late reply counted' });
  }, 30_000);

  it('a raw stream exchange: the late Modbus frame is no part of its reply', async () => {
    const pong = Buffer.from('#pong\n');
    const { bus, peer } = await rig(300, { answer: script(450, false), raw: { reply: pong, afterMs: 60 } });
    expect(await settle(bus.read(UNIT, 'holding', Y, 2))).toBeInstanceOf(ModbusTimeoutError);
    const reply = await bus.exchangeRaw(Buffer.from('#ping\n'), { replyTimeoutMs: 600, quietMs: 250, maxReplyBytes: 256 });
    expect(peer.rawRequests).toHaveLength(1);
    expect(bus.stats().lateReplies).toBe(1); // it came during the exchange
    expect(reply).toEqual(pong);
  }, 30_000);
});

describe('cloud writes during a late-reply guard', () => {
  it('wait in the queue and are delivered after it, a poll meanwhile is refused', async () => {
    const { bus, peer } = await rig(300, { answer: script(450, false) });
    const io = new BusDeviceIo(bus, deviceConfig({ name: 'meter', unitId: UNIT, points: [] }), systemTimers);
    // The first late reply shows the unit answers late: its next timeout guards the whole unit.
    expect(await settle(bus.read(UNIT, 'holding', Y, 2))).toBeInstanceOf(ModbusTimeoutError);
    await waitFor(() => bus.stats().lateReplies === 1, { what: 'the first late reply' });
    expect(await settle(bus.read(UNIT, 'holding', Y, 2))).toBeInstanceOf(ModbusTimeoutError);
    expect(await settle(bus.read(UNIT, 'holding', X, 2))).toBeInstanceOf(UnitLateReplyPendingError);
    await io.write({ kind: 'registers', address: X, words: [7, 8] });
    expect(bus.stats().lateReplies).toBe(2); // delivered once the late reply had come
    const write = peer.requests.find((r) => r.functionCode === 16);
    expect(write?.at).toBeGreaterThan((peer.requests.filter((r) => r.address === Y)[1]?.at ?? Infinity));
    expect((await io.read('holding', X, 2)).words).toEqual(Uint16Array.from([7, 8]));
  }, 30_000);
});
