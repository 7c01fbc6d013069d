// The emulator's read-only status route, over real HTTP while it runs: the app-side fan-out
// counters move as sessions are refused, opened, fed and closed; the route takes no writes.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { STATUS_PATH, startEmulator, type Emulator } from '../../../packages/emulator/src/index.js';
import { parseSeed } from '../../../packages/emulator/src/state/seed.js';
import { silentLogger } from '../../../src/ops/log.js';
import { connectApp, type AppSubscriber } from '../../helpers/app-subscriber.js';
import { waitFor } from '../../system/harness.js';
import { SEED_PATH } from './helpers.js';

const VIEW_KEY = 'status-view-key';
const VIEW_SECRET = 'status-view-secret';

async function start(withAppSide: boolean): Promise<Emulator> {
  const seed = parseSeed(readFileSync(SEED_PATH, 'utf8'), Date.now());
  seed.project.view_key = VIEW_KEY;
  seed.project.view_secret = VIEW_SECRET;
  return startEmulator({
    httpPort: 0, mqttPort: 0, tcpPort: 0, host: '127.0.0.1', seed, logger: silentLogger(),
    appSide: withAppSide ? { tcpPort: 0, wsPort: undefined, wssPort: undefined, tls: undefined, maxFrameBytes: 64 * 1024 } : undefined,
  });
}

// Tests read arbitrary status fields.
async function status(emu: Emulator, method = 'GET'): Promise<{ status: number; headers: Headers; body: Record<string, any> }> {
  const res = await fetch(`http://127.0.0.1:${emu.httpPort}${STATUS_PATH}`, { method });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? {} : JSON.parse(text) as Record<string, any> };
}

describe('emulator status route', () => {
  let emu: Emulator | undefined;
  const clients: AppSubscriber[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    await emu?.close();
    emu = undefined;
  });

  it('shows the app-side counters as they change, read over HTTP while the emulator runs', async () => {
    emu = await start(true);
    const e = emu;
    const before = await status(e);
    expect(before.status).toBe(200);
    expect(before.body.app_side).toMatchObject({ sessionsOpen: 0, sessionsAccepted: 0, loginsRefused: 0, messagesPublished: 0 });
    expect(before.body.now).toBeGreaterThanOrEqual(before.body.started_at);

    const door = { kind: 'mqtt' as const, port: e.appSide?.ports.tcp ?? 0 };
    await expect(connectApp(door, VIEW_KEY, 'wrong')).rejects.toSatisfy((err) => (err as { code?: number }).code === 5);
    const app = await connectApp(door, VIEW_KEY, VIEW_SECRET);
    clients.push(app);
    expect(await app.subscribe([`${VIEW_KEY}/+/attributes`, '#'])).toEqual([0, 128]);
    for (let n = 1; n <= 3; n += 1) e.link.onReport('dev-meter-1', { voltage: 230 + n });
    await waitFor(() => (app.messages.length === 3 ? true : undefined));

    const during = await status(e);
    expect(during.body.app_side).toMatchObject({
      sessionsOpen: 1, sessionsAccepted: 1, loginsRefused: 1, subscriptionsRefused: 1, messagesPublished: 3,
      messagesDroppedBacklog: 0, slowSubscribersDropped: 0,
    });

    await app.close();
    clients.splice(0);
    const after = await waitFor(async () => {
      const s = await status(e);
      return s.body.app_side.sessionsOpen === 0 ? s : undefined;
    });
    expect(after.body.app_side.sessionsAccepted).toBe(1);
  });

  it('is read-only: other methods get 405 with Allow, and nothing changes', async () => {
    emu = await start(true);
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const reply = await status(emu, method);
      expect(reply.status).toBe(405);
      expect(reply.headers.get('allow')).toBe('GET, HEAD');
    }
    expect((await status(emu, 'HEAD')).status).toBe(200);
    expect((await status(emu)).body.app_side.sessionsAccepted).toBe(0);
  });

  it('reports app_side null when the emulator runs without the app side; near paths stay unknown', async () => {
    emu = await start(false);
    expect((await status(emu)).body).toMatchObject({ app_side: null });
    for (const path of [`${STATUS_PATH}/`, `${STATUS_PATH}x`, '/emulator/v1']) {
      const res = await fetch(`http://127.0.0.1:${emu.httpPort}${path}`);
      expect(res.status).toBe(404);
    }
  });
});
