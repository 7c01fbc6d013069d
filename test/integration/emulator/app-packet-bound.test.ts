// The app side's bound on an incoming MQTT packet (aedes has none): a header announcing more than
// --app-max-frame-bytes closes the connection before the body is buffered, on the TCP door and on
// the WebSocket door (where a packet may span several messages each under the WebSocket bound);
// a flood of such connections is refused one by one while a dashboard keeps receiving.
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startEmulator, type Emulator } from '../../../packages/emulator/src/index.js';
import { parseSeed } from '../../../packages/emulator/src/state/seed.js';
import { silentLogger } from '../../../src/ops/log.js';
import { connectApp, type AppSubscriber } from '../../helpers/app-subscriber.js';
import { FLOOD_CAP_BYTES, floodUntilClosed, HUGE_LENGTH, rawConnectPacket } from '../../helpers/mqtt-flood.js';
import { waitFor } from '../../system/harness.js';
import { SEED_PATH } from './helpers.js';

const VIEW_KEY = 'bound-view-key';
const VIEW_SECRET = 'bound-view-secret';
const MAX_FRAME = 4096;

async function start(): Promise<Emulator> {
  const seed = parseSeed(readFileSync(SEED_PATH, 'utf8'), Date.now());
  seed.project.view_key = VIEW_KEY;
  seed.project.view_secret = VIEW_SECRET;
  return startEmulator({
    httpPort: 0, mqttPort: 0, tcpPort: 0, host: '127.0.0.1', seed, logger: silentLogger(),
    appSide: { tcpPort: 0, wsPort: 0, wssPort: undefined, tls: undefined, maxFrameBytes: MAX_FRAME },
  });
}

describe('app-side MQTT packet bound', () => {
  let emu: Emulator | undefined;
  const clients: AppSubscriber[] = [];
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    for (const s of sockets.splice(0)) s.destroy();
    await emu?.close();
    emu = undefined;
  });

  it('closes a connection whose CONNECT header announces 256 MiB, while the sender keeps flooding', async () => {
    emu = await start();
    const written = await floodUntilClosed(emu.appSide?.ports.tcp ?? 0, Buffer.from([0x10, ...HUGE_LENGTH]), sockets);
    // Closed long before the announced body (or our 64 MiB cap) was sent.
    expect(written).toBeLessThan(FLOOD_CAP_BYTES);
    expect(emu.appSide?.stats()).toMatchObject({ packetsTooLarge: 1, sessionsAccepted: 0 });
  }, 60_000);

  it('closes a logged-in session that starts a PUBLISH over the bound', async () => {
    emu = await start();
    const e = emu;
    const header = Buffer.concat([rawConnectPacket(VIEW_KEY, VIEW_SECRET), Buffer.from([0x30, 0x81, 0x40])]); // PUBLISH, remaining length 8193
    await floodUntilClosed(e.appSide?.ports.tcp ?? 0, header, sockets);
    expect(e.appSide?.stats()).toMatchObject({ packetsTooLarge: 1 });
    await waitFor(() => (e.appSide?.stats().sessionsOpen === 0 ? true : undefined));
  }, 60_000);

  it('closes a WebSocket connection whose packet spans messages each under the WebSocket bound', async () => {
    emu = await start();
    const e = emu;
    const ws = new WebSocket(`ws://127.0.0.1:${e.appSide?.ports.ws ?? 0}/mqtt`, 'mqtt');
    await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
    const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    ws.on('error', () => undefined);
    ws.send(rawConnectPacket(VIEW_KEY, VIEW_SECRET));
    ws.send(Buffer.from([0x82, 0x80, 0x80, 0x04])); // SUBSCRIBE announcing 64 KiB
    for (let i = 0; i < 20 && ws.readyState === WebSocket.OPEN; i += 1) ws.send(Buffer.alloc(MAX_FRAME - 16, 0x61));
    await closed;
    expect(e.appSide?.stats().packetsTooLarge).toBe(1);
  }, 60_000);

  it('a packet at the bound passes; a flood of 40 oversized connections is refused one by one while a dashboard keeps receiving', async () => {
    emu = await start();
    const e = emu;
    const dashboard = await connectApp({ kind: 'mqtt', port: e.appSide?.ports.tcp ?? 0 }, VIEW_KEY, VIEW_SECRET);
    clients.push(dashboard);
    // A SUBSCRIBE whose body is exactly the bound: refused as a filter (outside the project), not as a packet.
    const filter = `${VIEW_KEY}/${'x'.repeat(MAX_FRAME - 2 - 2 - 1 - VIEW_KEY.length - 1)}`;
    expect(await dashboard.subscribe([filter])).toEqual([128]);
    expect(await dashboard.subscribe([`${VIEW_KEY}/+/attributes`])).toEqual([0]);
    expect(e.appSide?.stats().packetsTooLarge).toBe(0);

    const flood = Array.from({ length: 40 }, (_, i) => floodUntilClosed(e.appSide?.ports.tcp ?? 0,
      i % 2 === 0 ? Buffer.from([0x10, ...HUGE_LENGTH]) : Buffer.concat([rawConnectPacket(VIEW_KEY, VIEW_SECRET), Buffer.from([0x30, ...HUGE_LENGTH])]), sockets));
    await Promise.all(flood);
    await waitFor(() => (e.appSide?.stats().packetsTooLarge === 40 ? true : undefined));

    e.link.onReport('dev-meter-1', { voltage: 232.5 });
    await waitFor(() => (dashboard.messages.some((m) => m.body.attributes?.voltage === 232.5) ? true : undefined));
    expect(dashboard.client.connected).toBe(true);
  }, 120_000);
});
