// A device removed by a reload leaves no reports waiting for it to come back (gateway mode: the
// daemon as a child process, the emulator as the cloud behind a pipe that can cut the channel).
// Its queued reports are sent under its identity while the link is up, for up to drainMs, and the
// rest is dropped and counted at once: per removed device, reports polled = delivered + counted
// dropped, the outbox empties (a stop has nothing left to wait for), and the kept device loses none.
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/mosquitto.js';
import { settle, sleep } from './delivery-rig.js';
import { GatewayRig, subName } from './gateway-rig.js';
import { GatewayLog, statusAt as status, statusWhen } from './storage-rig.js';

/** Stops every unit and waits until no device's cycle count moves: every report is made. */
async function silence(rig: GatewayRig, port: number): Promise<Map<string, number>> {
  await rig.sim.close();
  let before = '';
  for (let i = 0; i < 60; i += 1) {
    await sleep(1000);
    const s = await status(port);
    const now = JSON.stringify(s?.devices.map((d) => [d.name, d.cyclesWithValues]));
    if (now === before && s) return new Map(s.devices.map((d) => [d.name, d.cyclesWithValues ?? 0]));
    before = now;
  }
  throw new Error('devices kept polling');
}

describe('a device removed by a reload', () => {
  let rig: GatewayRig | undefined;
  let log: GatewayLog | undefined;
  afterEach(async () => {
    await rig?.close();
    log?.close();
    rig = undefined;
    log = undefined;
  });

  it.each([
    ['link down at the removal: its queued reports are dropped and counted at once', false],
    ['link up at the removal: its queued reports are sent under its identity for drainMs, the rest dropped and counted', true],
  ] as const)('%s', async (_title, linkUp) => {
    const port = await freePort();
    rig = await GatewayRig.start({ subs: 2, healthPort: port, logLevel: 'info', cloudExtra: 'replayRatePerS: 5, drainMs: 2000' });
    const r = rig;
    log = new GatewayLog(r.dir, 'gateway');
    const gateway = r.startGateway(log);
    await settle(() => r.units.every((u) => r.received(u).length >= 10), 30_000);
    // An outage: both devices queue reports; then they stop, so each one's count is final.
    r.pipe.cutOff(true);
    await sleep(4000);
    const polled = await silence(r, port);
    const before = await status(port);
    expect(before?.outbox?.depth).toBeGreaterThan(100);
    if (linkUp) {
      r.pipe.cutOff(false);
      await statusWhen(port, (s) => s.links.some((l) => l.device === '@fieldgate' && l.state === 'up'), 30_000);
    }

    r.writeSite([1]);
    gateway.child.kill('SIGHUP');
    const deliveredAtReload = new Set(r.receivedTs(2)).size;
    const reloaded = await statusWhen(port, (s) => (s.config?.generation ?? 1) >= 2, 30_000);
    expect(reloaded?.devices.map((d) => d.name)).toEqual([subName(1)]);
    if (!linkUp) r.pipe.cutOff(false);
    // The kept device's backlog goes out; nothing is left for the removed one.
    const drained = await statusWhen(port, (s) => s.outbox?.depth === 0, 60_000);
    await sleep(1000);
    const removed = subName(2);
    const dropped = drained?.outbox?.droppedByDevice?.[removed] ?? 0;
    const delivered = new Set(r.receivedTs(2)).size;
    const keptDelivered = new Set(r.receivedTs(1)).size;
    const lines = log.messages('removed device: queued reports dropped');
    gateway.child.kill('SIGTERM');
    const exitCode = await gateway.exited;
    console.log(`removed with the link ${linkUp ? 'up' : 'down'}: ${removed} polled ${polled.get(removed)}, delivered ${delivered}, dropped and counted ${dropped}; `
      + `(${deliveredAtReload} delivered before the reload); ${subName(1)} polled ${polled.get(subName(1))}, delivered ${keptDelivered}; outbox depth ${drained?.outbox?.depth}; exit ${exitCode}`);
    expect(drained?.outbox?.depth).toBe(0);
    // Every report polled is delivered or counted. One both delivered and counted is a report in
    // flight at the cut or at the removal whose PUBACK came too late: at least once, never a loss.
    const removedPolled = polled.get(removed) ?? -1;
    expect(removedPolled - delivered - dropped, 'unexplained').toBeLessThanOrEqual(0);
    expect(delivered + dropped - removedPolled, 'delivered and counted').toBeLessThanOrEqual(100);
    expect(keptDelivered).toBe(polled.get(subName(1)));
    expect(drained?.outbox?.dropped).toBe(dropped);
    expect(dropped).toBeGreaterThan(0);
    expect(lines).toEqual([expect.objectContaining({ device: removed, dropped, linkUp })]);
    if (linkUp) expect(delivered, 'sent under its identity while the link was up').toBeGreaterThan(deliveredAtReload);
    else expect(delivered).toBe(deliveredAtReload);
    expect(exitCode).toBe(0);
  }, 240_000);
});
