// The app side for devices behind a gateway and on the TCP stream: a sub-device's online state,
// reports, events, pushes and command replies reach a dashboard on the sub-device's own
// DeviceViewToken (never the gateway's), the gateway's going away takes its sub-devices offline
// there too, and bytes on a device's TCP stream arrive as `data` with `via: "tcp"`.
import { createConnection } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { APP_KINDS } from '../../../packages/emulator/src/appside/topics.js';
import { connectApp, type AppMessage, type AppSubscriber } from '../../helpers/app-subscriber.js';
import { waitFor } from '../../system/harness.js';
import { connectGateway, GATEWAY_SEED } from './gateway-fixtures.js';
import { PROJECT_KEY, startTestEmulator, type TestEmulator } from './helpers.js';

describe('app-side subscription through a gateway and the TCP stream', () => {
  let t: TestEmulator | undefined;
  let app: AppSubscriber | undefined;
  afterEach(async () => {
    await app?.close();
    await t?.emu.close();
    app = t = undefined;
  });

  it('carries every sub-device kind on the sub-device\'s own topic, and TCP stream bytes as data', async () => {
    t = await startTestEmulator({
      realChannel: true, seedText: GATEWAY_SEED,
      appSide: { tcpPort: undefined, wsPort: 0, wssPort: undefined, tls: undefined, maxFrameBytes: 65536 },
    });
    const s = t;
    const { view_key: key, view_secret: secret } = s.emu.state.project;
    const token = (id: string): string => s.emu.state.devices.get(id)?.view_token ?? '';
    app = await connectApp({ kind: 'ws', port: s.emu.appSide?.ports.ws ?? 0 }, key, secret);
    expect(await app.subscribe(APP_KINDS.map((kind) => `${key}/+/${kind}`))).toEqual(APP_KINDS.map(() => 0));
    const a = app;
    const on = (id: string, kind: string): AppMessage[] => a.messages.filter((m) => m.topic === `${key}/${token(id)}/${kind}`);
    const next = (id: string, kind: string, pred: (m: AppMessage) => boolean = () => true): Promise<AppMessage> =>
      waitFor(() => on(id, kind).find(pred));

    const gw = await connectGateway(s, 'gw-1-token');
    expect((await next('dev-gw-1', 'online')).body).toMatchObject({ online: true, device: { id: 'dev-gw-1' } });
    await gw.request('gateway/connect', { device: '1' }, 'gateway/connect/response');
    expect((await next('dev-sub-1', 'online')).body).toMatchObject({ online: true, device: { id: 'dev-sub-1', name: 'Sub 1', device_key: 'sub-1' } });

    // One batched report lands as one message per sub-device, each on its own token.
    await gw.request('gateway/attributes', { 1: { voltage: 230.5 }, 2: { voltage: 231.5 } }, 'gateway/attributes/response');
    expect((await next('dev-sub-1', 'attributes')).body).toMatchObject({ attributes: { voltage: 230.5 }, source: 'report' });
    expect((await next('dev-sub-2', 'attributes')).body).toMatchObject({ attributes: { voltage: 231.5 }, source: 'report' });

    await gw.request('gateway/event/report', { device: '1', event: { method: 'trip', params: { phase: 'L1' } } }, 'gateway/event/response');
    expect((await next('dev-sub-1', 'event')).body.event).toEqual({ id: 'gateway', method: 'trip', params: { phase: 'L1' } });

    // A push to the sub-device (interface A) is seen as pushed; the gateway gets it addressed.
    await s.api('POST', '/api/v1/control/device/dev-sub-1/attributes', { relay: true });
    expect((await next('dev-sub-1', 'attributes', (m) => m.body.source === 'push')).body.attributes).toEqual({ relay: true });
    await waitFor(() => (gw.on('gateway/attributes/push').length > 0 ? true : undefined));

    await gw.request('gateway/command/reply', { device: '1', command: { id: 5, method: 'read', params: { value: 42 } } }, 'gateway/command/reply/response');
    expect((await next('dev-sub-1', 'command_reply')).body).toMatchObject({ command: { id: 5, method: 'read', params: { value: 42 } }, reply_topic_id: '5' });

    // Custom data on the TCP stream of a direct device: registration, then raw bytes (any byte).
    const socket = createConnection(s.emu.tcpPort, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(`${PROJECT_KEY}&direct-token\r\n`);
    expect((await next('dev-direct', 'online')).body.online).toBe(true);
    socket.write(Buffer.from([0x00, 0x0d, 0x0a, 0xff]));
    expect((await next('dev-direct', 'data')).body.data).toEqual({ identifier: null, via: 'tcp', base64: Buffer.from([0x00, 0x0d, 0x0a, 0xff]).toString('base64') });
    socket.destroy();
    expect((await next('dev-direct', 'online', (m) => m.body.online === false)).body.device.id).toBe('dev-direct');

    // The gateway's connection ends: it and the sub-device it announced go offline on the app side.
    await gw.client.endAsync(true);
    expect((await next('dev-gw-1', 'online', (m) => m.body.online === false)).body.device.id).toBe('dev-gw-1');
    expect((await next('dev-sub-1', 'online', (m) => m.body.online === false)).body.device.id).toBe('dev-sub-1');

    // Every message names the device its topic's token belongs to; nothing of the gateway's
    // sub-devices went out on the gateway's own token, and nothing for devices never involved.
    for (const m of a.messages) expect(token(String(m.body.device.id))).toBe(m.topic.split('/')[1]);
    expect(on('dev-gw-1', 'attributes').concat(on('dev-gw-1', 'event'), on('dev-gw-1', 'command_reply'))).toEqual([]);
    expect(a.messages.filter((m) => ['dev-sub-3', 'dev-sub-free', 'dev-gw-2'].includes(String(m.body.device.id)))).toEqual([]);
    expect(on('dev-sub-2', 'online')).toEqual([]);
  });
});
