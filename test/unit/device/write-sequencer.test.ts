// The device's one write path with a fake bus whose writes finish when the test says: writes reach
// the bus one at a time in the order asked, a write never lands after a later-stamped one of the
// same point, queued writes of a point coalesce to the newest, a synced value gives way to writes
// under way, and a fenced (replaced) path's write leaves no mark. Then the same through the command
// service and the inbound dispatch: a push held during a replacement keeps its arrival stamp.
import { describe, expect, it } from 'vitest';
import type { CompiledDevice } from '../../../src/core/config/compile.js';
import { compileDevice } from '../../../src/core/config/compile.js';
import type { DeviceIo } from '../../../src/core/device-write-types.js';
import type { WriteOp } from '../../../src/core/points/codec.js';
import { CommandService } from '../../../src/device/commands.js';
import { DeviceReplacedError } from '../../../src/device/device-io.js';
import { InboundDispatch } from '../../../src/device/inbound-dispatch.js';
import { CloudValueSync, SETTLE_RETRY_MS } from '../../../src/device/cloud-value-sync.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { WriteSequencer, WriteSequencers } from '../../../src/device/write-sequencer.js';
import { silentLogger } from '../../../src/ops/log.js';

/** A bus whose writes wait for `finish()`, recording what reached it. */
function fakeBus() {
  const reached: string[] = [];
  const pending: Array<() => void> = [];
  return {
    reached,
    run: (label: string) => () => new Promise<void>((resolve) => {
      reached.push(label);
      pending.push(resolve);
    }),
    finishAll: async () => {
      for (let i = 0; i < 50; i += 1) {
        pending.splice(0).forEach((r) => r());
        await new Promise((r) => setImmediate(r));
      }
    },
    inFlight: () => pending.length,
  };
}

describe('write sequencer', () => {
  it('takes writes to the bus one at a time, in the order asked', async () => {
    const seq = new WriteSequencer('d');
    const bus = fakeBus();
    const a = seq.write('x', seq.stamp(), bus.run('x1'));
    const b = seq.write('y', seq.stamp(), bus.run('y1'));
    await new Promise((r) => setImmediate(r));
    expect(bus.reached).toEqual(['x1']);
    expect(bus.inFlight()).toBe(1);
    await bus.finishAll();
    expect(await a).toBe('written');
    expect(await b).toBe('written');
    expect(bus.reached).toEqual(['x1', 'y1']);
  });

  it('drops a write of a point that already took a later-stamped one (an older value never lands after a newer)', async () => {
    const seq = new WriteSequencer('d');
    const bus = fakeBus();
    const older = seq.stamp();
    const newer = seq.stamp();
    const first = seq.write('setpoint', newer, bus.run('new'));
    await bus.finishAll();
    expect(await first).toBe('written');
    expect(await seq.write('setpoint', older, bus.run('old'))).toBe('superseded');
    // Another point is not affected, nor a write of the same origin (same stamp).
    const other = seq.write('speed', older, bus.run('speed-old'));
    const same = seq.write('setpoint', newer, bus.run('new-again'));
    await bus.finishAll();
    expect([await other, await same]).toEqual(['written', 'written']);
    expect(bus.reached).toEqual(['new', 'speed-old', 'new-again']);
    expect(seq.counters).toEqual({ written: 3, superseded: 1, coalesced: 0, yielded: 0, notSynced: 3 });
  });

  it('an older write queued behind a newer one of the same point is dropped at its turn', async () => {
    const seq = new WriteSequencer('d');
    const bus = fakeBus();
    const older = seq.stamp();
    const newer = seq.stamp();
    const blocker = seq.write('other', seq.stamp(), bus.run('other'));
    const n = seq.write('setpoint', newer, bus.run('new'));
    const o = seq.write('setpoint', older, bus.run('old'));
    await bus.finishAll();
    expect([await blocker, await n, await o]).toEqual(['written', 'written', 'superseded']);
    expect(bus.reached).toEqual(['other', 'new']);
  });

  it('queued writes of a point coalesce to the newest', async () => {
    const seq = new WriteSequencer('d');
    const bus = fakeBus();
    const v1 = seq.write('setpoint', seq.stamp(), bus.run('v1'));
    await new Promise((r) => setImmediate(r));
    // v1 is on the bus; three more wait behind it.
    const v2 = seq.write('setpoint', seq.stamp(), bus.run('v2'));
    const v3 = seq.write('setpoint', seq.stamp(), bus.run('v3'));
    const v4 = seq.write('setpoint', seq.stamp(), bus.run('v4'));
    await bus.finishAll();
    expect(await Promise.all([v1, v2, v3, v4])).toEqual(['written', 'superseded', 'superseded', 'written']);
    expect(bus.reached).toEqual(['v1', 'v4']);
    expect(seq.counters.coalesced).toBe(2);
  });

  it('a synced value gives way to a write of its point under way, and coalesces nothing', async () => {
    const seq = new WriteSequencer('d');
    const bus = fakeBus();
    const push = seq.write('setpoint', seq.stamp(), bus.run('push'));
    // Stamped later (its read was sent after the push arrived), but the cloud's stored value lags the push.
    const synced = seq.write('setpoint', seq.stamp(), bus.run('synced'), { yields: true });
    const syncedOther = seq.write('speed', seq.stamp(), bus.run('synced-speed'), { yields: true });
    await bus.finishAll();
    expect(await Promise.all([push, synced, syncedOther])).toEqual(['written', 'superseded', 'written']);
    expect(bus.reached).toEqual(['push', 'synced-speed']);
    expect(seq.counters.yielded).toBe(1);
    // The push is news to the cloud's stored values; the synced value written is not.
    expect(seq.counters).toMatchObject({ written: 2, notSynced: 1 });
    // A push queued behind a synced value is not coalesced into it.
    const blocker = seq.write('x', seq.stamp(), bus.run('x'));
    const p1 = seq.write('setpoint', seq.stamp(), bus.run('p1'));
    const s1 = seq.write('setpoint', seq.stamp(), bus.run('s1'), { yields: true });
    await bus.finishAll();
    expect(await Promise.all([blocker, p1, s1])).toEqual(['written', 'written', 'superseded']);
  });

  it('a write refused by a fenced path leaves no mark; a bus failure does', async () => {
    const seq = new WriteSequencer('d');
    const newer = seq.stamp();
    await expect(seq.write('setpoint', newer, () => Promise.reject(new DeviceReplacedError('d')))).rejects.toThrow(DeviceReplacedError);
    const older = seq.stamp() - 2;
    expect(await seq.write('setpoint', older, () => Promise.resolve())).toBe('written');
    const later = seq.stamp();
    await expect(seq.write('setpoint', later, () => Promise.reject(new Error('timeout')))).rejects.toThrow('timeout');
    // The device may have taken the timed-out write: nothing older may follow it.
    expect(await seq.write('setpoint', later - 1, () => Promise.resolve())).toBe('superseded');
  });

  it('one sequencer per device name, shared by every command path the device has had', () => {
    const all = new WriteSequencers();
    const first = all.of('meter-1');
    expect(all.of('meter-1')).toBe(first);
    expect(all.of('meter-2')).not.toBe(first);
    const stamp = first.stamp();
    expect(all.of('meter-1').stamp()).toBeGreaterThan(stamp);
    all.forget('meter-1');
    expect(all.of('meter-1')).not.toBe(first);
  });
});

/** A device with one writable int16 point at holding 0, compiled as the site file would be. */
function compiled(): CompiledDevice {
  return compileDevice({
    name: 'meter', bus: 'plant', unitId: 1, pollIntervalMs: 1000,
    limits: { maxRegistersPerRead: 125, maxBitsPerRead: 2000, maxGap: 8, forceMultiWrite: false },
    points: [{
      id: 'setpoint', table: 'holding', address: 0, type: 'int16', bit: 0, length: 1, wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0,
      writable: true, report: { mode: 'change', deadband: 0, deadbandKind: 'absolute', maxSilenceMs: 0 },
    }],
    commands: [], streams: [],
  });
}

/** A device's registers behind a bus whose writes finish when released. */
function heldIo() {
  const register = [0];
  const writes: number[] = [];
  let gate: Promise<void> = Promise.resolve();
  let open: () => void = () => undefined;
  const io: DeviceIo = {
    read: async (table, start, count) => ({ table, start, words: register.slice(start, start + count) }),
    write: async (op: WriteOp) => {
      await gate;
      if (op.kind === 'registers') {
        register[op.address] = op.words[0]!;
        writes.push(op.words[0]!);
      }
    },
    sleep: async () => undefined,
  };
  return {
    io, writes,
    close: () => { gate = new Promise((r) => { open = r; }); },
    open: () => open(),
  };
}

describe('write order through the command service', () => {
  it('a replaced command path and its replacement share the order: an older push run late on either never lands after a newer one', async () => {
    const order = new WriteSequencers();
    const bus = heldIo();
    const old = new CommandService(compiled(), [], bus.io, silentLogger(), undefined, order.of('meter'));
    const replacement = new CommandService(compiled(), [], bus.io, silentLogger(), undefined, order.of('meter'));
    const olderStamp = old.stampWrite();
    const newerStamp = replacement.stampWrite();
    bus.close();
    const newer = replacement.applyAttributes({ setpoint: 20 }, 'push', newerStamp);
    const older = old.applyAttributes({ setpoint: 10 }, 'push', olderStamp);
    bus.open();
    const [n, o] = await Promise.all([newer, older]);
    expect(bus.writes).toEqual([20]);
    expect(n.applied).toEqual({ setpoint: 20 });
    // The dropped write is not read back: the newer write's read-back reports what the device holds.
    expect(o.applied).toEqual({});
    expect(o.failed).toEqual({});
  });

  it('a write without a stamp (the page, a command run directly) is stamped when asked', async () => {
    const order = new WriteSequencers();
    const bus = heldIo();
    const service = new CommandService(compiled(), [], bus.io, silentLogger(), undefined, order.of('meter'));
    const early = service.stampWrite();
    await service.applyAttributes({ setpoint: 7 }, 'web');
    expect((await service.applyAttributes({ setpoint: 3 }, 'push', early)).applied).toEqual({});
    expect((await service.runCommand('write', { setpoint: 9 })).ok).toBe(true);
    expect(bus.writes).toEqual([7, 9]);
  });
});

describe('write order through the inbound dispatch', () => {
  it('a push is stamped when it arrives: held through a replacement, it still yields to a sync read after it', async () => {
    const order = new WriteSequencers();
    const applied: Array<{ values: Record<string, unknown>; stamp: number | undefined }> = [];
    const target = {
      values: {
        apply: async (values: Record<string, unknown>, _source: string, stamp?: number) => void applied.push({ values, stamp }),
        correct: async () => undefined,
        knows: () => true,
        stamp: () => order.of('meter').stamp(),
      },
      commands: { runCommand: async () => ({ ok: true as const, result: {} }) },
      streams: new Map(),
      log: silentLogger(),
    };
    const dispatch = new InboundDispatch({ maxPendingPerDevice: 8, log: silentLogger() });
    dispatch.addDevice('meter', target);
    dispatch.hold('meter');
    dispatch.dispatch('meter', { kind: 'attributes-push', attributes: { setpoint: 5 } }, () => undefined);
    // The replacement's sync reads the cloud after the push arrived.
    const syncStamp = order.of('meter').stamp();
    dispatch.resume('meter', target);
    await new Promise((r) => setImmediate(r));
    expect(applied).toHaveLength(1);
    expect(applied[0]!.stamp).toBeLessThan(syncStamp);
  });
});

describe('interface-B sync and the write order', () => {
  it('waits while the cloud has not heard the device (a report unacknowledged, a write being confirmed), then reads, stamped at the read', async () => {
    const clock = new ManualClock();
    let settled = false;
    let stamps = 0;
    const reads: number[] = [];
    const applied: Array<{ stamp: number | undefined; synced: boolean | undefined }> = [];
    const sync = new CloudValueSync({
      identity: { name: 'meter' } as never,
      credentials: { resolve: async () => ({ accessToken: 't', projectKey: 'p' }) as never },
      deviceApi: { readAttributes: async () => { reads.push(clock.now()); return { setpoint: 5 }; } },
      writable: ['setpoint'],
      values: {
        apply: async (_v: Record<string, unknown>, _s: string, stamp?: number, synced?: boolean) => void applied.push({ stamp, synced }),
        held: () => ({}),
        stamp: () => { stamps += 1; return stamps; },
      },
      periodMs: 0, timers: clock, log: silentLogger(), settled: () => settled,
    });
    sync.start();
    await sync.sync('start');
    expect(reads).toEqual([]);
    clock.advance(SETTLE_RETRY_MS);
    await new Promise((r) => setImmediate(r));
    expect(reads).toEqual([]);
    settled = true;
    clock.advance(SETTLE_RETRY_MS);
    for (let i = 0; i < 5; i += 1) await new Promise((r) => setImmediate(r));
    expect(reads).toHaveLength(1);
    expect(applied).toEqual([{ stamp: 1, synced: true }]);
    // Stopped: a waiting sync is not tried again.
    settled = false;
    await sync.sync('period');
    sync.stop();
    clock.advance(SETTLE_RETRY_MS * 4);
    await new Promise((r) => setImmediate(r));
    expect(reads).toHaveLength(1);
  });
});
