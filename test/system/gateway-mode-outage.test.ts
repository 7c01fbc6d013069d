// Gateway mode under faults, daemon as a child process, every device a sub-device of the one
// identity link: the channel to the cloud cut and restored (nothing lost, each sub-device in order,
// sub-devices offline with the gateway's connection and online again), and `kill -9` with a
// backlog and with PUBACKs held (nothing lost beyond the outbox's crash window, duplicates counted).
import { afterEach, describe, expect, it } from 'vitest';
import { firstArrivals, outOfOrder, settle, sleep, type GatewayProcess } from './delivery-rig.js';
import { GATEWAY_ID, GatewayRig, subName } from './gateway-rig.js';

const SUBS = 4;
const WINDOW_MS = 1000;
const OUTAGE_MS = 4000;

describe('gateway mode: outages and crashes', () => {
  let rig: GatewayRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  async function reporting(r: GatewayRig, atLeast: number): Promise<void> {
    await settle(() => r.units.every((u) => r.online(u) && r.received(u).length >= atLeast), 60_000);
    for (const u of r.units) expect(r.received(u).length, `sub-device ${u} reporting`).toBeGreaterThanOrEqual(atLeast);
  }

  /** Waits for a second of live reports past `past` on every sub-device, then for every committed row. */
  async function drained(r: GatewayRig, past: Map<number, number>): Promise<Map<number, number[]>> {
    await settle(() => r.units.every((u) => r.received(u).some((v) => v > (past.get(u) ?? 0) + 100)), 60_000);
    r.outbox.sample();
    const committed = new Map(r.units.map((u) => [u, r.committedBy(u)]));
    await settle(() => r.units.every((u) => r.missing(u, committed.get(u)).length === 0), 30_000);
    return committed;
  }

  async function stop(gateway: GatewayProcess): Promise<number | null> {
    gateway.child.kill('SIGTERM');
    return gateway.exited;
  }

  const newest = (r: GatewayRig) => new Map(r.units.map((u) => [u, Math.max(0, ...r.committedBy(u), ...r.received(u))]));
  const duplicates = (r: GatewayRig) => r.units.reduce((n, u) => n + r.received(u).length - firstArrivals(r.received(u)).length, 0);

  it('the channel cut and restored: every committed report arrives, per sub-device in order; sub-devices follow the gateway offline and online', async () => {
    rig = await GatewayRig.start({ subs: SUBS });
    const r = rig;
    const gateway = r.startGateway();
    await reporting(r, 10);

    r.pipe.cutOff(true);
    await settle(() => !r.emulator.state.isOnline(GATEWAY_ID) && r.units.every((u) => !r.online(u)), 15_000);
    const offlineDuringCut = r.units.filter((u) => !r.online(u));
    const beforeBacklog = new Map(r.units.map((u) => [u, r.received(u).length]));
    await sleep(OUTAGE_MS);
    r.outbox.sample();
    // Past the crash window, unacknowledged reports are on disk: the backlog of the outage.
    const backlog = new Map(r.units.map((u) => [u, r.missing(u).length]));
    const arrivedDuringCut = r.units.filter((u) => r.received(u).length !== beforeBacklog.get(u));
    r.pipe.cutOff(false);

    await settle(() => r.units.every((u) => r.online(u)), 30_000);
    const onlineAgain = r.units.filter((u) => r.online(u));
    const committed = await drained(r, newest(r));
    const exitCode = await stop(gateway);

    const total = r.units.reduce((n, u) => n + (committed.get(u)?.length ?? 0), 0);
    console.log(`gateway channel cut ${OUTAGE_MS} ms, ${SUBS} sub-devices: ${total} reports committed, `
      + `backlog on disk at the restore ${[...backlog.values()].join('/')}, ${duplicates(r)} redelivered, `
      + `${r.units.reduce((n, u) => n + r.missing(u, committed.get(u)).length, 0)} missing`);
    expect(offlineDuringCut, 'every sub-device offline with the gateway connection').toEqual(r.units);
    expect(arrivedDuringCut, 'nothing arrives while the channel is cut').toEqual([]);
    for (const u of r.units) {
      expect(backlog.get(u), `sub-device ${u}: the outage built a backlog`).toBeGreaterThan(10);
      expect(r.missing(u, committed.get(u)), `sub-device ${u}: committed and never arrived`).toEqual([]);
      expect(outOfOrder(r.received(u)), `sub-device ${u}: out of order`).toEqual([]);
    }
    expect(onlineAgain, 'every sub-device online again').toEqual(r.units);
    expect(exitCode).toBe(0);
  }, 180_000);

  it(`kill -9 with a backlog (channel cut): everything on disk arrives after the restart; at most the ${WINDOW_MS} ms crash window is lost`, async () => {
    rig = await GatewayRig.start({ subs: SUBS, durableAfterMs: WINDOW_MS });
    const r = rig;
    const first = r.startGateway();
    await reporting(r, 10);
    r.pipe.cutOff(true);
    await sleep(OUTAGE_MS);
    first.child.kill('SIGKILL');
    const killedAt = Date.now();
    await first.exited;
    r.outbox.sample();
    const onDiskAtKill = new Map(r.units.map((u) => [u, r.committedBy(u)]));
    // Poll time of each sub-device's newest report on disk: what is newer lived in memory only.
    const lostWindowMs = new Map(r.units.map((u) => [u, killedAt - (r.outbox.lastTsBy.get(subName(u)) ?? 0)]));
    const past = newest(r);
    r.pipe.cutOff(false);

    const second = r.startGateway();
    const committed = await drained(r, past);
    const exitCode = await stop(second);

    console.log(`gateway kill -9 with backlog, ${SUBS} sub-devices: on disk at the kill ${[...onDiskAtKill.values()].map((v) => v.length).join('/')}, `
      + `newest on disk ${[...lostWindowMs.values()].join('/')} ms before the kill (window ${WINDOW_MS} ms), ${duplicates(r)} redelivered`);
    for (const u of r.units) {
      expect(onDiskAtKill.get(u)?.length, `sub-device ${u}: the outage reached the disk`).toBeGreaterThan(10);
      expect(r.missing(u, onDiskAtKill.get(u)), `sub-device ${u}: on disk at the kill, never arrived`).toEqual([]);
      expect(r.missing(u, committed.get(u)), `sub-device ${u}: committed, never arrived`).toEqual([]);
      expect(outOfOrder(r.received(u)), `sub-device ${u}: out of order`).toEqual([]);
      // The window plus a commit and a poll, with slack for a loaded machine: a report kept in
      // memory past the window (no spill to disk) would show as the whole outage.
      expect(lostWindowMs.get(u), `sub-device ${u}: memory-only at the kill`).toBeLessThan(WINDOW_MS + 2000);
    }
    expect(exitCode).toBe(0);
  }, 180_000);

  it('kill -9 while reporting live with PUBACKs held: the unacknowledged reports are sent again, duplicates counted', async () => {
    rig = await GatewayRig.start({ subs: SUBS, durableAfterMs: WINDOW_MS });
    const r = rig;
    const first = r.startGateway();
    await reporting(r, 10);
    r.pipe.holdBrokerReplies(true);
    await sleep(2 * WINDOW_MS + 500);
    first.child.kill('SIGKILL');
    await first.exited;
    r.pipe.holdBrokerReplies(false);
    r.outbox.sample();
    const atKill = new Map(r.units.map((u) => [u, r.outbox.pendingOf(subName(u))]));
    const past = newest(r);

    const second = r.startGateway();
    const committed = await drained(r, past);
    const exitCode = await stop(second);

    const redelivered = duplicates(r);
    console.log(`gateway kill -9 live, PUBACKs held: unacked on disk at the kill ${[...atKill.values()].map((v) => v.length).join('/')}, ${redelivered} redelivered`);
    for (const u of r.units) {
      expect(atKill.get(u)?.length, `sub-device ${u}: unacked reports on disk at the kill`).toBeGreaterThan(5);
      expect(r.missing(u, atKill.get(u)), `sub-device ${u}: unacked at the kill, never arrived`).toEqual([]);
      expect(r.missing(u, committed.get(u)), `sub-device ${u}: committed, never arrived`).toEqual([]);
      expect(outOfOrder(r.received(u)), `sub-device ${u}: out of order`).toEqual([]);
    }
    // The held batches reached the cloud before the kill and are sent again after it.
    expect(redelivered).toBeGreaterThan(0);
    expect(exitCode).toBe(0);
  }, 180_000);
});
