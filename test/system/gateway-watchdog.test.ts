// The watchdog watches the gateway-mode link: the daemon (real CLI, emulator as the cloud) behind a
// proxy that passes the identity's PUBLISHes to the broker and drops every PUBACK coming back
// (PINGRESP passes, so the link stays up). With sub-device reports waiting and nothing
// acknowledged for 2 keepalives + the watchdog's slack (30 s by default, 3 s here), the link is reported stalled (/healthz 503, and no
// watchdog ping for systemd to restart on); after the restart systemd would make, every committed
// report arrives.
import { afterEach, describe, expect, it } from 'vitest';
import type { GatewayStatus } from '../../src/ops/status.js';
import { freePort } from '../helpers/mosquitto.js';
import { settle, sleep } from './delivery-rig.js';
import { GatewayRig } from './gateway-rig.js';
import { getJson } from './storage-rig.js';

const KEEPALIVE_S = 10;
const WATCHDOG_SLACK_MS = 3000;
/** linkProgress: 2 keepalives + the slack without an acknowledgement. */
const STALL_MS = 2 * KEEPALIVE_S * 1000 + WATCHDOG_SLACK_MS;

async function health(port: number): Promise<{ status: number; reasons: string[] } | undefined> {
  try {
    const res = await getJson<{ reasons: string[] }>(port, '/healthz');
    return { status: res.status, reasons: res.body.reasons };
  } catch {
    return undefined;
  }
}

describe('watchdog in gateway mode', () => {
  let rig: GatewayRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it('an identity link that stays up and acknowledges nothing is reported stalled; after a restart every committed report arrives', async () => {
    const port = await freePort();
    rig = await GatewayRig.start({ subs: 2, healthPort: port, keepaliveS: KEEPALIVE_S, watchdogSlackMs: WATCHDOG_SLACK_MS });
    const r = rig;
    const first = r.startGateway();
    await settle(() => r.units.every((u) => r.received(u).length >= 10), 30_000);
    expect((await health(port))?.status).toBe(200);

    r.pipe.dropPubacks(true);
    const droppedAt = Date.now();
    let stalled: { status: number; reasons: string[] } | undefined;
    while (Date.now() - droppedAt < STALL_MS + 30_000) {
      stalled = await health(port);
      if (stalled?.reasons.includes('link @fieldgate made no progress')) break;
      await sleep(1000);
    }
    const after = Date.now() - droppedAt;
    const status = (await getJson<GatewayStatus>(port, '/status')).body;
    expect(stalled?.status).toBe(503);
    expect(stalled?.reasons).toContain('link @fieldgate made no progress');
    expect(status.links.find((l) => l.device === '@fieldgate')?.state, 'the link stayed up').toBe('up');
    expect(status.outbox?.depth).toBeGreaterThan(0);

    // What systemd does on the missing ping: the process ends and starts again.
    first.child.kill('SIGKILL');
    await first.exited;
    r.pipe.dropPubacks(false);
    const second = r.startGateway();
    await settle(() => r.units.every((u) => r.missing(u).length === 0), 60_000);
    const committed = r.units.map((u) => r.committedBy(u).length);
    const missing = r.units.map((u) => r.missing(u).length);
    console.log(`gateway link without PUBACKs: stalled reported after ${after} ms (allowed ${STALL_MS} ms), backlog ${status.outbox?.depth}; `
      + `after the restart ${committed.join(' + ')} committed, ${missing.join(' + ')} missing`);
    expect(missing).toEqual(r.units.map(() => 0));
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 240_000);
});
