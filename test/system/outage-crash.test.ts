// A long broker outage with two SIGKILLs of the gateway in it (memory-first outbox): one while
// reports are being produced (reports of the last crash window may be lost: counted), one after
// the device fell silent for longer than the window (nothing may be lost). Then the broker comes
// back: everything that reached the disk, and everything produced before the window, arrives in
// order. FIELDGATE_OUTAGE_S sets the outage (default 20 s in the suite; the 60 s run is
// `FIELDGATE_OUTAGE_S=60 npx vitest run test/system/outage-crash.test.ts`).
import { afterEach, describe, expect, it } from 'vitest';
import { DeliveryRig, firstArrivals, outOfOrder, settle, sleep } from './delivery-rig.js';

const OUTAGE_MS = Number(process.env.FIELDGATE_OUTAGE_S ?? 20) * 1000;
const WINDOW_MS = 1000;
const POLL_MS = 50;

describe('broker outage with gateway crashes (memory-first)', () => {
  let rig: DeliveryRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it(`keeps every report produced before the crash window across a ${OUTAGE_MS / 1000} s outage and two kill -9`, async () => {
    rig = await DeliveryRig.start({ mode: 'memory-first', durableAfterMs: WINDOW_MS });
    const r = rig;
    let gateway = r.startGateway();
    await settle(() => r.received.length >= 20, 30_000);
    const deliveredBeforeOutage = firstArrivals(r.received);
    const outageStart = Date.now();
    await r.broker.stop();

    // Kill 1, inside the window: reports are being polled every 50 ms right up to the kill.
    await sleep(OUTAGE_MS / 2);
    gateway.child.kill('SIGKILL');
    const kill1 = Date.now();
    await gateway.exited;
    r.outbox.sample();
    const lostWindowMs = Math.max(0, kill1 - r.outbox.lastTs);
    const onDiskAtKill1 = [...r.outbox.seen];
    gateway = r.startGateway();

    // Kill 2, outside the window: the device goes silent (its last report is `online: false`),
    // and the kill comes well after the window has passed.
    await settle(() => r.outbox.seen.length > onDiskAtKill1.length + 20, 30_000);
    await r.sim.close();
    await sleep(Math.max(OUTAGE_MS / 2 - (Date.now() - kill1), 3 * WINDOW_MS + 2000));
    r.outbox.sample();
    const onDiskBeforeKill2 = [...r.outbox.seen];
    const offlineOnDisk = [...r.outbox.offlineTs];
    gateway.child.kill('SIGKILL');
    await gateway.exited;
    r.outbox.sample();
    const onDiskAtKill2 = [...r.outbox.seen];

    const outageMs = Date.now() - outageStart;
    await r.broker.restart();
    gateway = r.startGateway();
    await settle(() => r.missing(onDiskAtKill2).length === 0 && offlineOnDisk.every((ts) => r.offlineTs.includes(ts)), 60_000);
    gateway.child.kill('SIGTERM');
    await gateway.exited;

    const unique = firstArrivals(r.received);
    const produced = unique.length + Math.floor(lostWindowMs / POLL_MS);
    console.log(`outage ${Math.round(outageMs / 1000)} s: ${produced} reports produced (estimated), ${unique.length} delivered, `
      + `${Math.floor(lostWindowMs / POLL_MS)} lost inside the window of kill 1 (last report on disk ${lostWindowMs} ms before the kill; window ${WINDOW_MS} ms), `
      + `0 may be lost at kill 2: ${r.missing(onDiskBeforeKill2).length} missing; `
      + `${r.received.length - unique.length} duplicated; ${onDiskAtKill2.length} reports went through the disk`);
    expect(r.missing(deliveredBeforeOutage)).toEqual([]);
    expect(r.missing(onDiskAtKill1)).toEqual([]);
    // Everything produced before the silence reached the disk before kill 2, and arrived.
    expect(onDiskAtKill2).toEqual(onDiskBeforeKill2);
    expect(r.missing(onDiskAtKill2)).toEqual([]);
    expect(offlineOnDisk.length, 'the device\'s last report before kill 2 (offline) reached the disk').toBeGreaterThan(0);
    expect(offlineOnDisk.filter((ts) => !r.offlineTs.includes(ts)), 'and arrived').toEqual([]);
    expect(outOfOrder(r.received)).toEqual([]);
  }, 120_000 + 2 * OUTAGE_MS);
});
