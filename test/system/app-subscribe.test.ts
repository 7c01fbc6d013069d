// A dashboard on the app-side subscription, written to the cloud's documented protocol (wss at
// /mqtt, ProjectViewKey login, `<key>/+/attributes` at QoS 0), watches a real fieldgate gateway
// through the emulator: its polled reports, a push from the cloud and a command reply.
import { readFileSync, rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import { silentLogger } from '../../src/ops/log.js';
import { connectApp, type AppMessage, type AppSubscriber } from '../helpers/app-subscriber.js';
import { makeTestCertificates, type TestCertificates } from '../helpers/tls-certs.js';
import { deviceApi, meterDevice, startSite, waitFor, type Site } from './harness.js';

const TOKEN = 'demo-meter-1-token';

describe('app-side subscription end to end', () => {
  let site: Site | undefined;
  let gateway: GatewayHandle | undefined;
  let app: AppSubscriber | undefined;
  let certs: TestCertificates | undefined;
  afterEach(async () => {
    await app?.close();
    await gateway?.stop();
    await site?.close();
    if (certs) rmSync(certs.dir, { recursive: true, force: true });
    app = gateway = site = certs = undefined;
  });

  it('receives the gateway\'s reports, a push and a command reply over wss with the view key', async () => {
    certs = makeTestCertificates();
    const tls = { cert: readFileSync(certs.certFile), key: readFileSync(certs.keyFile) };
    site = await startSite({ appSide: { tcpPort: undefined, wsPort: undefined, wssPort: 0, tls, maxFrameBytes: 65536 } });
    const s = site;
    const { view_key: key, view_secret: secret } = s.emulator.state.project;
    const meter = s.emulator.state.devices.get('dev-meter-1');
    if (!meter) throw new Error('seed has no dev-meter-1');
    app = await connectApp({ kind: 'wss', port: s.emulator.appSide?.ports.wss ?? 0, ca: readFileSync(certs.caFile) }, key, secret);
    expect(await app.subscribe([`${key}/+/attributes`, `${key}/+/command_reply`])).toEqual([0, 0]);
    const a = app;
    const find = (pred: (m: AppMessage) => boolean) => waitFor(() => a.messages.find(pred));
    const meterAttrs = (m: AppMessage) => m.topic === `${key}/${meter.view_token}/attributes`;

    gateway = await startGateway(s.config([meterDevice('meter-1', 1, TOKEN)]), { logger: silentLogger(), env: {} });
    const report = await find((m) => meterAttrs(m) && m.body.source === 'report' && m.body.attributes.voltage === 230.1);
    expect(report.body.device).toEqual({ id: 'dev-meter-1', name: meter.name, type: meter.type, device_key: meter.device_key });
    expect(report.body.attributes).toMatchObject({ speed: 1450, voltage: 230.1, pump: false });

    // A push is seen as sent, then as the device's read-back report.
    expect((await deviceApi(s, TOKEN, 'POST', '/attributes', { setpoint: 42.5 })).result).toBe(1);
    const push = await find((m) => meterAttrs(m) && m.body.source === 'push');
    expect(push.body.attributes).toEqual({ setpoint: 42.5 });
    await find((m) => meterAttrs(m) && m.body.source === 'report' && m.body.attributes.setpoint === 42.5);

    const sync = await deviceApi(s, TOKEN, 'POST', '/command/sync/send', { method: 'set_speed', params: { rpm: 1200 }, id: 77 });
    expect(sync).toMatchObject({ result: 1, command: { id: 77 } });
    const reply = await find((m) => m.topic === `${key}/${meter.view_token}/command_reply`);
    expect(reply.body).toMatchObject({ command: { method: 'set_speed', id: 77, params: { speed: 1200 } }, device: { id: 'dev-meter-1' } });

    // Nothing outside the two filters arrived, and nothing was discarded on the way.
    expect(a.messages.every((m) => m.topic.startsWith(`${key}/`) && /\/(attributes|command_reply)$/.test(m.topic))).toBe(true);
    expect(s.emulator.appSide?.stats()).toMatchObject({ sessionsOpen: 1, messagesDiscardedSlow: 0, messagesDroppedBacklog: 0 });
  });
});
