import { afterEach, describe, expect, it } from 'vitest';
import mqtt from 'mqtt';
import { Mosquitto } from '../../helpers/mosquitto.js';

let broker: Mosquitto | undefined;
afterEach(async () => {
  await broker?.dispose();
  broker = undefined;
});

describe('mosquitto test helper', () => {
  it('starts, stops and restarts on the same port', async () => {
    broker = await Mosquitto.start();
    const port = broker.port;
    const client = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0, protocolVersion: 4 });
    await client.endAsync();
    await broker.stop();
    expect(broker.running).toBe(false);
    await expect(mqtt.connectAsync(broker.url, { reconnectPeriod: 0, connectTimeout: 2000 })).rejects.toThrow();
    await broker.restart();
    expect(broker.port).toBe(port);
    const again = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    await again.endAsync();
  });
});
