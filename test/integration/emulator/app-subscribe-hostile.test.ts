// The app-side subscription as an attacker and a careless dashboard would use it: wrong secret,
// a device credential, filters outside the project, QoS above 0, publishes, 10,000 filters, and
// a subscriber that never reads while others must keep receiving.
import { readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import mqttPacket from 'mqtt-packet';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { AppSideOptions } from '../../../packages/emulator/src/appside/index.js';
import { startEmulator, type Emulator } from '../../../packages/emulator/src/index.js';
import { parseSeed } from '../../../packages/emulator/src/state/seed.js';
import { silentLogger } from '../../../src/ops/log.js';
import { connectApp, type AppSubscriber, type AppTransport } from '../../helpers/app-subscriber.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { makeTestCertificates, type TestCertificates } from '../../helpers/tls-certs.js';
import { waitFor } from '../../system/harness.js';
import { SEED_PATH, PROJECT_KEY } from './helpers.js';

const VIEW_KEY = 'view-key-1';
const VIEW_SECRET = 'view-secret-1';
let certs: TestCertificates;
beforeAll(() => { certs = makeTestCertificates(); });
afterAll(() => rmSync(certs.dir, { recursive: true, force: true }));

async function start(limits: AppSideOptions['limits'] = {}, maxPendingMessages?: number, logger = silentLogger()): Promise<Emulator> {
  const seed = parseSeed(readFileSync(SEED_PATH, 'utf8'), Date.now());
  seed.project.view_key = VIEW_KEY;
  seed.project.view_secret = VIEW_SECRET;
  return startEmulator({
    httpPort: 0, mqttPort: 0, tcpPort: 0, host: '127.0.0.1', seed, logger,
    appSide: {
      tcpPort: 0, wsPort: 0, wssPort: 0, tls: { cert: readFileSync(certs.certFile), key: readFileSync(certs.keyFile) },
      maxFrameBytes: 1024 * 1024, limits, maxPendingMessages,
    },
  });
}

function doors(emu: Emulator): AppTransport[] {
  const ports = emu.appSide?.ports;
  if (!ports?.tcp || !ports.ws || !ports.wss) throw new Error('app side not listening');
  return [{ kind: 'mqtt', port: ports.tcp }, { kind: 'ws', port: ports.ws }, { kind: 'wss', port: ports.wss, ca: readFileSync(certs.caFile) }];
}

function connackCode(err: unknown): number | undefined {
  return (err as { code?: number }).code;
}

describe('app-side subscription, hostile', () => {
  let emu: Emulator | undefined;
  const clients: AppSubscriber[] = [];
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    for (const s of sockets.splice(0)) s.destroy();
    await emu?.close();
    emu = undefined;
  });

  it('refuses a wrong secret, a missing one and a device credential with CONNACK 5 / 4, on every door', async () => {
    emu = await start();
    for (const door of doors(emu)) {
      await expect(connectApp(door, VIEW_KEY, 'wrong')).rejects.toSatisfy((e) => connackCode(e) === 5);
      await expect(connectApp(door, 'demo-meter-1-token', PROJECT_KEY)).rejects.toSatisfy((e) => connackCode(e) === 5);
      await expect(connectApp(door, VIEW_KEY, '')).rejects.toSatisfy((e) => connackCode(e) === 4);
    }
    // The view key is no device credential either.
    const device = connectApp({ kind: 'mqtt', port: emu.mqttPort }, VIEW_KEY, VIEW_SECRET);
    await expect(device).rejects.toSatisfy((e) => connackCode(e) === 5);
    expect(emu.appSide?.stats()).toMatchObject({ loginsRefused: 9, sessionsOpen: 0 });
  });

  it('fails to start with one clear error when the wss port is taken, logged by no one else', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    const log = captureLogger();
    try {
      const seed = parseSeed(readFileSync(SEED_PATH, 'utf8'), Date.now());
      const tls = { cert: readFileSync(certs.certFile), key: readFileSync(certs.keyFile) };
      await expect(startEmulator({
        httpPort: 0, mqttPort: 0, tcpPort: 0, host: '127.0.0.1', seed, logger: log.logger,
        appSide: { tcpPort: 0, wsPort: 0, wssPort: port, tls, maxFrameBytes: 65536 },
      })).rejects.toThrow(new RegExp(`cannot listen for app-side wss on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`));
      expect(log.lines().filter((l) => (l.level as number) >= 50)).toEqual([]);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('answers WebSocket upgrades only at /mqtt', async () => {
    emu = await start();
    const port = emu.appSide?.ports.ws ?? 0;
    for (const path of ['/', '/mqttx', '/api/mqtt']) {
      const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, 'mqtt');
      const status = await new Promise<number | undefined>((resolve) => {
        ws.once('unexpected-response', (_req, res) => { resolve(res.statusCode); ws.terminate(); });
        ws.once('open', () => { resolve(101); ws.terminate(); });
        ws.once('error', () => resolve(undefined));
      });
      expect(status).toBe(400);
    }
  });

  it('grants only <key>/<token|+>/<kind> at QoS 0 and refuses every other filter with 0x80', async () => {
    emu = await start();
    const app = await connectApp(doors(emu)[1]!, VIEW_KEY, VIEW_SECRET);
    clients.push(app);
    const token = emu.state.devices.get('dev-meter-1')?.view_token ?? '';
    const granted = await app.subscribe([
      `${VIEW_KEY}/+/attributes`, `${VIEW_KEY}/${token}/event`, `${VIEW_KEY}/+/online`,
      'other-key/+/attributes', '#', `${VIEW_KEY}/#`, `${VIEW_KEY}/+/+`, `${VIEW_KEY}/+/nonsense`,
      `${VIEW_KEY}/+/attributes/extra`, 'attributes', `+/${token}/attributes`, `${VIEW_KEY}//attributes`,
    ]);
    expect(granted).toEqual([0, 0, 0, 128, 128, 128, 128, 128, 128, 128, 128, 128]);
    expect(await app.subscribe([`${VIEW_KEY}/+/data`], 1)).toEqual([128]);
    // A device's own traffic reaches only the granted filters.
    emu.link.onReport('dev-meter-1', { voltage: 1 });
    await waitFor(() => (app.messages.length > 0 ? true : undefined));
    expect(app.messages.map((m) => m.topic)).toEqual([`${VIEW_KEY}/${token}/attributes`]);
  });

  it('closes the connection on any publish, to app topics or device topics alike', async () => {
    emu = await start();
    for (const topic of [`${VIEW_KEY}/x/attributes`, 'attributes', 'command/reply/1']) {
      const app = await connectApp(doors(emu)[0]!, VIEW_KEY, VIEW_SECRET);
      clients.push(app);
      const closed = new Promise<void>((resolve) => app.client.once('close', () => resolve()));
      app.client.publish(topic, '{"voltage":1}', { qos: 1 });
      await closed;
    }
    expect(emu.appSide?.stats().publishesRefused).toBe(3);
    expect(emu.state.devices.get('dev-meter-1')?.attributes.get('voltage')?.value).not.toBe(1);
  });

  it('10,000 subscriptions: the session keeps at most its bound, the rest refused, the service keeps serving', async () => {
    emu = await start({ maxSubscriptionsPerSession: 50 });
    const app = await connectApp(doors(emu)[1]!, VIEW_KEY, VIEW_SECRET);
    clients.push(app);
    const granted: number[] = [];
    for (let batch = 0; batch < 20; batch += 1) {
      const filters = Array.from({ length: 500 }, (_, i) => `${VIEW_KEY}/token-${batch * 500 + i}/attributes`);
      granted.push(...(await app.subscribe(filters)));
    }
    expect(granted.length).toBe(10_000);
    expect(granted.filter((q) => q === 0).length).toBe(50);
    expect(emu.appSide?.stats().subscriptionsRefused).toBe(9_950);
    // Re-subscribing a held filter is no new one; a fresh dashboard still gets its own.
    expect(await app.subscribe([`${VIEW_KEY}/token-0/attributes`])).toEqual([0]);
    const other = await connectApp(doors(emu)[0]!, VIEW_KEY, VIEW_SECRET);
    clients.push(other);
    expect(await other.subscribe([`${VIEW_KEY}/+/attributes`])).toEqual([0]);
  });

  it('refuses a session over --app-max-sessions with CONNACK 3, and takes one again when another closes', async () => {
    emu = await start({ maxSessions: 3 });
    const e = emu;
    for (const door of doors(e)) clients.push(await connectApp(door, VIEW_KEY, VIEW_SECRET));
    for (const door of doors(e)) await expect(connectApp(door, VIEW_KEY, VIEW_SECRET)).rejects.toSatisfy((err) => connackCode(err) === 3);
    await clients.shift()!.close();
    await waitFor(() => (e.appSide?.stats().sessionsOpen === 2 ? true : undefined));
    clients.push(await connectApp(doors(e)[1]!, VIEW_KEY, VIEW_SECRET));
    expect(e.appSide?.stats()).toMatchObject({ sessionsOpen: 3, sessionsAccepted: 4, loginsRefused: 3 });
  });

  it('closes connections that never log in: over --app-max-pending-logins at once (logged once), the rest after the login timeout; a dashboard gets in after them', async () => {
    const log = captureLogger();
    emu = await start({ maxPendingLogins: 5, loginTimeoutMs: 1500 }, undefined, log.logger);
    const e = emu;
    const closed: Promise<void>[] = [];
    for (let i = 0; i < 200; i += 1) {
      const socket = connect(e.appSide?.ports.tcp ?? 0, '127.0.0.1');
      socket.on('error', () => undefined);
      sockets.push(socket);
      closed.push(new Promise((resolve) => socket.once('close', () => resolve())));
    }
    await waitFor(() => (e.appSide?.stats().connectionsRefusedPending === 195 ? true : undefined), 20_000);
    // A dashboard arriving while 5 idle sockets hold every place is refused too: the bound holds on every door.
    await expect(connectApp(doors(e)[1]!, VIEW_KEY, VIEW_SECRET)).rejects.toBeTruthy();
    // The login timeout closes the idle five; every socket of the flood ends closed by the emulator.
    await Promise.all(closed);
    const app = await connectApp(doors(e)[2]!, VIEW_KEY, VIEW_SECRET);
    clients.push(app);
    expect(await app.subscribe([`${VIEW_KEY}/+/attributes`])).toEqual([0]);
    expect(e.appSide?.stats()).toMatchObject({ sessionsOpen: 1, connectionsRefusedPending: 196 });
    expect(log.count('app connections refused: too many not logged in')).toBe(1);
    expect(log.count('app connections accepted again')).toBe(1);
  }, 60_000);

  it('frees a filter\'s place in the session bound when it is unsubscribed', async () => {
    emu = await start({ maxSubscriptionsPerSession: 2 });
    const app = await connectApp(doors(emu)[0]!, VIEW_KEY, VIEW_SECRET);
    clients.push(app);
    expect(await app.subscribe([`${VIEW_KEY}/+/attributes`, `${VIEW_KEY}/+/event`, `${VIEW_KEY}/+/online`])).toEqual([0, 0, 128]);
    await app.client.unsubscribeAsync(`${VIEW_KEY}/+/event`);
    expect(await app.subscribe([`${VIEW_KEY}/+/online`, `${VIEW_KEY}/+/data`])).toEqual([0, 128]);
  });

  it('drops a last will: a dashboard that dies publishes nothing to the others', async () => {
    emu = await start();
    const e = emu;
    const token = e.state.devices.get('dev-meter-1')?.view_token ?? '';
    const topic = `${VIEW_KEY}/${token}/attributes`;
    const watcher = await connectApp(doors(e)[0]!, VIEW_KEY, VIEW_SECRET);
    clients.push(watcher);
    await watcher.subscribe([topic]);
    const packet = mqttPacket.generate({
      cmd: 'connect', protocolId: 'MQTT', protocolVersion: 4, clean: true, clientId: 'willing', keepalive: 0,
      username: VIEW_KEY, password: Buffer.from(VIEW_SECRET), will: { topic, payload: Buffer.from('{"attributes":{"forged":true}}'), qos: 0, retain: false },
    });
    const socket = connect(e.appSide?.ports.tcp ?? 0, '127.0.0.1');
    sockets.push(socket);
    socket.write(packet);
    await waitFor(() => (e.appSide?.stats().sessionsOpen === 2 ? true : undefined));
    socket.destroy(); // an abrupt end: the case a will is for
    await waitFor(() => (e.appSide?.stats().sessionsOpen === 1 ? true : undefined));
    // A real message after it: when it has arrived, a will sent before it would have too.
    e.link.onReport('dev-meter-1', { voltage: 2 });
    await waitFor(() => (watcher.messages.length > 0 ? true : undefined));
    expect(watcher.messages.map((m) => m.body.attributes)).toEqual([{ voltage: 2 }]);
    // Dropped at CONNECT, not merely refused when aedes tried to publish it.
    expect(e.appSide?.stats().publishesRefused).toBe(0);
  });

  /** A raw client on the TCP or the WebSocket door: CONNECT + SUBSCRIBE, then it stops reading. */
  async function frozenSubscriber(e: Emulator, door: 'mqtt' | 'ws'): Promise<void> {
    const packets = [
      mqttPacket.generate({ cmd: 'connect', protocolId: 'MQTT', protocolVersion: 4, clean: true, clientId: 'frozen', keepalive: 0, username: VIEW_KEY, password: Buffer.from(VIEW_SECRET) }),
      mqttPacket.generate({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: `${VIEW_KEY}/+/attributes`, qos: 0 }] }),
    ];
    if (door === 'mqtt') {
      const socket = connect(e.appSide?.ports.tcp ?? 0, '127.0.0.1');
      sockets.push(socket);
      for (const p of packets) socket.write(p);
      await waitFor(() => (e.appSide?.stats().sessionsOpen === 1 ? true : undefined));
      socket.pause();
      return;
    }
    const ws = new WebSocket(`ws://127.0.0.1:${e.appSide?.ports.ws ?? 0}/mqtt`, 'mqtt');
    await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
    for (const p of packets) ws.send(p);
    await waitFor(() => (e.appSide?.stats().sessionsOpen === 1 ? true : undefined));
    // ws's own socket: pausing it stops reading frames off the wire.
    const raw = (ws as unknown as { _socket: Socket })._socket;
    sockets.push(raw);
    raw.pause();
  }

  it.each(['mqtt', 'ws'] as const)('a subscriber that never reads (%s door) is fed no more, then dropped; the others keep receiving', async (door) => {
    emu = await start({ slowSubscriberTimeoutMs: 500 }, 200);
    const e = emu;
    await frozenSubscriber(e, door);
    const live = await connectApp(doors(e)[1]!, VIEW_KEY, VIEW_SECRET);
    clients.push(live);
    await live.subscribe([`${VIEW_KEY}/+/attributes`]);

    const device = e.state.devices.get('dev-meter-1');
    if (!device) throw new Error('seed has no dev-meter-1');
    const blob = 'x'.repeat(16 * 1024);
    let sent = 0;
    let maxInFlight = 0;
    const deadline = Date.now() + 60_000;
    while ((e.appSide?.stats().slowSubscribersDropped ?? 0) === 0 && Date.now() < deadline) {
      for (let i = 0; i < 20; i += 1) e.link.updateCloudAttributes(device, { blob, n: (sent += 1) });
      maxInFlight = Math.max(maxInFlight, e.appSide?.stats().messagesInFlight ?? 0);
      await new Promise((r) => setTimeout(r, 5));
    }
    // The frozen session is gone on the emulator's side (its paused socket never reads the FIN).
    await waitFor(() => (e.appSide?.stats().sessionsOpen === 1 ? true : undefined));
    const stats = e.appSide?.stats();
    expect(stats?.slowSubscribersDropped).toBe(1);
    expect(stats?.messagesDiscardedSlow).toBeGreaterThan(0);
    expect(maxInFlight).toBeLessThanOrEqual(200);
    // The live dashboard got the last message despite its frozen neighbour.
    e.link.updateCloudAttributes(device, { n: -1 });
    await waitFor(() => (live.messages.some((m) => m.body.attributes.n === -1) ? true : undefined), 30_000);
    expect(e.appSide?.stats().sessionsOpen).toBe(1);
  }, 120_000);
});
