// A device that replies as the vendor's LuatOS SDK does by default: on `command/reply/1000`,
// and (in two of its demos) without an id in the payload. A synchronous command still completes,
// matched by method, answered under the command's own id; a reply of another method does not.
import { readFileSync } from 'node:fs';
import mqtt, { type MqttClient } from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../../packages/emulator/src/index.js';
import { parseSeed } from '../../../packages/emulator/src/state/seed.js';
import { silentLogger } from '../../../src/ops/log.js';
import { PROJECT_KEY, request, SEED_PATH } from './helpers.js';

const TOKEN = 'demo-meter-1-token';

describe('LuatOS-style command replies', () => {
  let emu: Emulator | undefined;
  let device: MqttClient | undefined;
  afterEach(async () => {
    await device?.endAsync(true);
    await emu?.close();
    emu = device = undefined;
  });

  async function start(replyMethod: (method: string) => string): Promise<Emulator> {
    const seed = parseSeed(readFileSync(SEED_PATH, 'utf8'), Date.now());
    const e = await startEmulator({ httpPort: 0, mqttPort: 0, tcpPort: 0, host: '127.0.0.1', seed, logger: silentLogger(), syncReplyTimeoutMs: 1500 });
    emu = e;
    device = await mqtt.connectAsync(`mqtt://127.0.0.1:${e.mqttPort}`, { username: TOKEN, password: PROJECT_KEY, reconnectPeriod: 0 });
    const d = device;
    await d.subscribeAsync('command/send/+', { qos: 1 });
    d.on('message', (_topic, payload) => {
      const command = JSON.parse(payload.toString()) as { method: string };
      d.publish('command/reply/1000', JSON.stringify({ method: replyMethod(command.method), params: { status: true } }), { qos: 1 });
    });
    return e;
  }

  const syncSend = (e: Emulator, body: unknown) =>
    request(`http://127.0.0.1:${e.httpPort}`, 'POST', `/app/device/v1/${TOKEN}/command/sync/send`, body, { 'Project-Key': PROJECT_KEY });

  it('completes the sync command of the same method, under the command\'s id', async () => {
    const e = await start((method) => method);
    const reply = await syncSend(e, { method: 'ota', params: { url: 'x' }, id: 42 });
    expect(reply.body).toEqual({ result: 1, command: { method: 'ota', params: { status: true }, id: 42 } });
    // The oldest of two pending commands of that method is answered first.
    const [first, second] = await Promise.all([syncSend(e, { method: 'ota', params: {}, id: 43 }), syncSend(e, { method: 'ota', params: {}, id: 44 })]);
    expect([first.body.command?.id, second.body.command?.id]).toEqual([43, 44]);
  });

  it('leaves a command of another method waiting: 410 after the timeout', async () => {
    const e = await start(() => 'otaFinished');
    const reply = await syncSend(e, { method: 'otaUpgrade', params: {}, id: 45 });
    expect(reply.body).toMatchObject({ result: 0, errcode: 410 });
  });
});
