// The gateway protocol against independent clients: mosquitto_pub / mosquitto_sub as the gateway.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from './channel-fixtures.js';
import { PROJECT_KEY, type TestEmulator } from './helpers.js';
import { currentValues, startGatewaySite } from './gateway-fixtures.js';
import { messages, MosquittoClients } from './mosquitto-clients.js';

let t: TestEmulator;
const clients = new MosquittoClients(() => t.emu.mqttPort, PROJECT_KEY);
const raw = (deviceId: string) => currentValues(t, deviceId);

beforeEach(async () => {
  t = await startGatewaySite();
});

afterEach(async () => {
  await clients.stopAll();
  await t.emu.close();
});

describe('mosquitto clients as a gateway', () => {
  it('mosquitto_pub reports a batch for two sub-devices', async () => {
    const pub = await clients.publish('gw-1-token', 'gateway/attributes', '{"1":{"voltage":230.1},"2":{"voltage":229.9}}');
    expect(pub.exitCode()).toBe(0);
    await expect.poll(() => raw('dev-sub-2')).toEqual({ voltage: 229.9 });
    expect(await raw('dev-sub-1')).toEqual({ voltage: 230.1 });
  });

  it('mosquitto_sub hears pushes and commands for its sub-devices, addressed, and nothing for another gateway\'s', async () => {
    const sub = await clients.subscribe('gw-1-token', ['gateway/#']);
    await t.api('POST', '/api/v1/control/device/dev-sub-3/attributes', { for: 'gw-2' });
    await t.api('POST', '/api/v1/control/device/dev-sub-2/attributes', { relay: false });
    await t.app('POST', '/app/device/v1/sub-1-token/command/send', { method: 'poll', id: 4 });
    await waitFor(() => messages(sub).length === 2, 'push and command');
    expect(messages(sub)).toEqual([
      'gateway/attributes/push {"2":{"relay":false}}',
      'gateway/command/send {"device":"1","command":{"id":4,"method":"poll","params":{}}}',
    ]);
  });
});
