// A bus share in front of a simulated RTU line while the bus is polled: independent masters
// (mbpoll, pymodbus) get the simulator's values, cache answers cost the line nothing (counted at
// the simulator), policy refusals and line failures come back as the exceptions the standard names.
import { afterEach, describe, expect, it } from 'vitest';
import { startHostileRtuPeer, startHostileTcpPeer, truth, type HostilePeer } from '../../helpers/hostile-modbus.js';
import { startPymodbus } from '../../helpers/pymodbus.js';
import { mbpollHolding, pymodbusRequests } from '../../helpers/share-clients.js';
import { waitFor } from '../../helpers/wait.js';
import { startShareRig, type ShareRig } from './share-rig.js';

const rigs: ShareRig[] = [];
afterEach(async () => {
  for (const rig of rigs.splice(0)) await rig.stop();
});

async function hostileRig(share: Record<string, unknown>, bus: Record<string, unknown> = {}): Promise<{ rig: ShareRig; peer: HostilePeer }> {
  let peer: HostilePeer | undefined;
  const rig = await startShareRig({ share, bus, pollEveryMs: 50 }, async (path) => {
    peer = await startHostileRtuPeer({ healthyUnit: 1, hostileUnit: 2, timeoutMs: 300 }, path);
    return () => peer!.stop();
  });
  rigs.push(rig);
  return { rig, peer: peer! };
}

const range = (start: number, count: number, unit: number) => Array.from({ length: count }, (_, i) => truth(unit, start + i));

describe('share in front of an RTU line', () => {
  it('gives mbpoll and pymodbus the simulator\'s values while polls run', async () => {
    const { rig } = await hostileRig({});
    await waitFor(() => rig.polls.ok >= 4, { what: 'polls running' });
    const mbpoll = await mbpollHolding(rig.port, 1, 0, 10);
    expect(mbpoll.values, mbpoll.output).toEqual(range(0, 10, 1));
    const results = await pymodbusRequests(rig.port, [{ fc: 3, unit: 2, address: 40, count: 5 }, { fc: 3, unit: 1, address: 100, count: 125 }]);
    expect(results).toEqual([{ registers: range(40, 5, 2) }, { registers: range(100, 125, 1) }]);
    const [status] = rig.shares.status();
    expect(status).toMatchObject({ forwarded: 3, fromCache: 0, failed: 0, refusedByPolicy: 0 });
    expect(status?.queueWaitMs.p99).toBeGreaterThanOrEqual(0);
    expect(rig.polls.failed).toBe(0);
  });

  it('answers a read covered by the latest poll from memory, with no request on the line', async () => {
    const { rig, peer } = await hostileRig({ cacheMs: 30_000 });
    await waitFor(() => rig.polls.ok >= 4, { what: 'polls running' });
    rig.stopPolling();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const before = peer.hostileReads;
    const results = await pymodbusRequests(rig.port, [
      { fc: 3, unit: 2, address: 2, count: 4 }, { fc: 3, unit: 2, address: 0, count: 10 }, { fc: 3, unit: 2, address: 8, count: 4 },
    ]);
    expect(results.slice(0, 2)).toEqual([{ registers: range(2, 4, 2) }, { registers: range(0, 10, 2) }]);
    // 8..11 runs past the polled block 0..9: it goes to the device.
    expect(results[2]).toEqual({ registers: range(8, 4, 2) });
    expect(peer.hostileReads).toBe(before + 1);
    expect(rig.shares.status()[0]).toMatchObject({ fromCache: 2, forwarded: 1 });
  });

  it('refuses what the policy does not allow with the standard exceptions', async () => {
    const { rig, peer } = await hostileRig({ units: { 1: 1, 20: 2 }, policy: { 20: { functions: [3], ranges: [{ table: 'holding', from: 0, to: 9 }] } } });
    const before = peer.hostileReads;
    const results = await pymodbusRequests(rig.port, [
      { fc: 6, unit: 1, address: 0, values: [5] },
      { fc: 3, unit: 9, address: 0, count: 1 },
      { fc: 3, unit: 2, address: 0, count: 1 },
      { fc: 4, unit: 20, address: 0, count: 1 },
      { fc: 3, unit: 20, address: 5, count: 10 },
      { fc: 3, unit: 20, address: 5, count: 5 },
    ]);
    expect(results).toEqual([
      { exception: 1 }, { exception: 10 }, { exception: 10 }, { exception: 1 }, { exception: 2 }, { registers: range(5, 5, 2) },
    ]);
    expect(rig.shares.status()[0]).toMatchObject({ refusedByPolicy: 5, forwarded: 1 });
    // One client (one pymodbus connection): its first refusal is logged, the others counted.
    expect(rig.log.lines().filter((l) => String(l.msg).startsWith('share request refused'))).toEqual([
      expect.objectContaining({ unit: 1, function: 6, exception: 1, reason: 'read-only share' }),
    ]);
    expect(peer.hostileReads).toBeGreaterThan(before);
  });

  it('answers 0x0B when the unit times out and 0x0A while it is guarded or cooling down; polls of the other unit go on', async () => {
    const { rig, peer } = await hostileRig({}, { cooldown: { afterTimeouts: 1, initialMs: 30_000, maxMs: 30_000 } });
    await waitFor(() => rig.polls.ok >= 2, { what: 'polls running' });
    rig.stopPolling();
    await new Promise((resolve) => setTimeout(resolve, 200));
    peer.muted = true;
    const results = await pymodbusRequests(rig.port, [{ fc: 3, unit: 2, address: 50, count: 2 }, { fc: 3, unit: 2, address: 50, count: 2 }]);
    expect(results).toEqual([{ exception: 0x0b }, { exception: 0x0a }]);
    peer.muted = false;
    expect(await pymodbusRequests(rig.port, [{ fc: 3, unit: 1, address: 0, count: 2 }])).toEqual([{ registers: range(0, 2, 1) }]);
    expect(rig.shares.status()[0]).toMatchObject({ failed: 2 });
  });
});

describe('share with writes, in front of pymodbus on the line', () => {
  async function pymodbusRig(share: Record<string, unknown>): Promise<ShareRig> {
    const rig = await startShareRig({ share: { access: 'read-write', ...share }, pollEveryMs: 50 }, async (path) => {
      const slave = await startPymodbus({ serial: path }, { units: [1, 2] });
      return () => slave.stop();
    });
    rigs.push(rig);
    return rig;
  }

  it('forwards a write, logs it once, and a later read sees it (the cache forgets what a write changed)', async () => {
    const rig = await pymodbusRig({ cacheMs: 30_000, policy: { 1: { functions: [3, 6], ranges: [{ table: 'holding', from: 0, to: 20 }] } } });
    await waitFor(() => rig.polls.ok >= 4, { what: 'polls running' });
    const results = await pymodbusRequests(rig.port, [
      { fc: 3, unit: 1, address: 3, count: 1 },
      { fc: 6, unit: 1, address: 3, values: [4242] },
      { fc: 3, unit: 1, address: 3, count: 1 },
      { fc: 6, unit: 1, address: 30, values: [1] },
      { fc: 16, unit: 1, address: 3, values: [1, 2] },
    ]);
    expect(results).toEqual([{ registers: [1003] }, { ok: true }, { registers: [4242] }, { exception: 2 }, { exception: 1 }]);
    const writes = rig.log.lines().filter((l) => l.msg === 'share write forwarded');
    expect(writes).toEqual([expect.objectContaining({ unit: 1, function: 6, address: 3, count: 1, client: expect.stringMatching(/^127\.0\.0\.1:\d+$/) })]);
  });
});

describe('share in front of a Modbus TCP bus', () => {
  it('forwards, answers from the cache, and maps a timeout to 0x0B', async () => {
    const bus = { kind: 'tcp', host: '127.0.0.1', port: 0, cooldown: { afterTimeouts: 5, initialMs: 30_000, maxMs: 30_000 } };
    let peer: HostilePeer | undefined;
    const rig = await startShareRig({ share: { cacheMs: 30_000 }, bus, pollEveryMs: 50 }, async () => {
      peer = await startHostileTcpPeer({ healthyUnit: 1, hostileUnit: 2, timeoutMs: 300 });
      bus.port = Number(peer.endpoint);
      return () => peer!.stop();
    });
    rigs.push(rig);
    await waitFor(() => rig.polls.ok >= 4, { what: 'polls running' });
    rig.stopPolling();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const before = peer!.hostileReads;
    expect(await pymodbusRequests(rig.port, [{ fc: 3, unit: 2, address: 0, count: 10 }, { fc: 3, unit: 2, address: 30, count: 3 }]))
      .toEqual([{ registers: range(0, 10, 2) }, { registers: range(30, 3, 2) }]);
    expect(peer!.hostileReads).toBe(before + 1);
    peer!.muted = true;
    expect(await pymodbusRequests(rig.port, [{ fc: 3, unit: 2, address: 60, count: 1 }])).toEqual([{ exception: 0x0b }]);
    expect(rig.shares.status()[0]).toMatchObject({ fromCache: 1, forwarded: 2, failed: 1 });
  });
});
