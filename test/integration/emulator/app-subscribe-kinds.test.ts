// Every kind of message the app side carries, from a real device connection on the device
// channel to a dashboard on `<key>/+/<kind>`: online, attributes (report, push, cloud update),
// event, command reply, custom data (MQTT and TCP stream), offline.
import { readFileSync } from 'node:fs';
import mqtt from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { APP_KINDS } from '../../../packages/emulator/src/appside/topics.js';
import { startEmulator, type Emulator } from '../../../packages/emulator/src/index.js';
import { parseSeed } from '../../../packages/emulator/src/state/seed.js';
import { silentLogger } from '../../../src/ops/log.js';
import { connectApp, type AppMessage, type AppSubscriber } from '../../helpers/app-subscriber.js';
import { waitFor } from '../../system/harness.js';
import { PROJECT_KEY, request, SEED_PATH } from './helpers.js';

describe('app-side subscription message kinds', () => {
  let emu: Emulator | undefined;
  let app: AppSubscriber | undefined;
  afterEach(async () => {
    await app?.close();
    await emu?.close();
    app = emu = undefined;
  });

  it('carries each kind with the device object, on the device\'s DeviceViewToken topic', async () => {
    const seed = parseSeed(readFileSync(SEED_PATH, 'utf8'), Date.now());
    emu = await startEmulator({
      httpPort: 0, mqttPort: 0, tcpPort: 0, host: '127.0.0.1', seed, logger: silentLogger(),
      appSide: { tcpPort: undefined, wsPort: 0, wssPort: undefined, tls: undefined, maxFrameBytes: 65536 },
    });
    const e = emu;
    const { view_key: key, view_secret: secret } = e.state.project;
    const meter = e.state.devices.get('dev-meter-1');
    if (!meter) throw new Error('seed has no dev-meter-1');
    app = await connectApp({ kind: 'ws', port: e.appSide?.ports.ws ?? 0 }, key, secret);
    expect(await app.subscribe(APP_KINDS.map((kind) => `${key}/+/${kind}`))).toEqual(APP_KINDS.map(() => 0));
    const a = app;
    const next = (kind: string, pred: (m: AppMessage) => boolean = () => true) =>
      waitFor(() => a.messages.find((m) => m.topic === `${key}/${meter.view_token}/${kind}` && pred(m)));

    const device = mqtt.connect(`mqtt://127.0.0.1:${e.mqttPort}`, { username: meter.access_token, password: PROJECT_KEY, reconnectPeriod: 0 });
    await new Promise<void>((resolve, reject) => {
      device.once('connect', () => resolve());
      device.once('error', reject);
    });
    const online = await next('online');
    expect(online.body).toMatchObject({ online: true, device: { id: 'dev-meter-1', device_key: meter.device_key } });

    device.publish('attributes', JSON.stringify({ voltage: 231.5 }), { qos: 1 });
    expect((await next('attributes', (m) => m.body.source === 'report')).body.attributes).toEqual({ voltage: 231.5 });
    device.publish('event/report/9', JSON.stringify({ method: 'door_open', params: { door: 2 } }), { qos: 1 });
    expect((await next('event')).body.event).toEqual({ id: '9', method: 'door_open', params: { door: 2 } });
    device.publish('command/reply/41', JSON.stringify({ method: 'reboot', params: { ok: true }, id: 41 }), { qos: 1 });
    expect((await next('command_reply')).body).toMatchObject({ command: { method: 'reboot', id: 41, params: { ok: true } }, reply_topic_id: '41' });
    device.publish('data/raw', Buffer.from([0, 1, 0xfe, 0xff]), { qos: 1 });
    expect((await next('data')).body.data).toEqual({ identifier: 'raw', via: 'mqtt', base64: Buffer.from([0, 1, 0xfe, 0xff]).toString('base64') });

    const base = `http://127.0.0.1:${e.httpPort}/app/device/v1/${meter.access_token}/attributes`;
    await request(base, 'POST', '', { setpoint: 3 }, { 'Project-Key': PROJECT_KEY });
    expect((await next('attributes', (m) => m.body.source === 'push')).body.attributes).toEqual({ setpoint: 3 });
    await request(base, 'PUT', '', { note: 'cloud side' }, { 'Project-Key': PROJECT_KEY });
    expect((await next('attributes', (m) => m.body.source === 'cloud')).body.attributes).toEqual({ note: 'cloud side' });

    await new Promise<void>((resolve) => device.end(true, {}, () => resolve()));
    expect((await next('online', (m) => m.body.online === false)).body.device.id).toBe('dev-meter-1');
    // Every message names the device the same way and carries a time.
    for (const m of a.messages) expect(m.body).toMatchObject({ device: { id: 'dev-meter-1', name: meter.name, type: meter.type }, ts: expect.any(Number) });
  });
});
