// A gateway site in the emulator (fixtures/gateway-seed.yaml) and an mqtt.js gateway connection.
import { readFileSync } from 'node:fs';
import { connectAsync, type MqttClient } from 'mqtt';
import { PROJECT_KEY, startTestEmulator, type StartOptions, type TestEmulator } from './helpers.js';

export const GATEWAY_SEED = readFileSync(new URL('./fixtures/gateway-seed.yaml', import.meta.url), 'utf8');

export function startGatewaySite(options: StartOptions = {}): Promise<TestEmulator> {
  return startTestEmulator({ realChannel: true, seedText: GATEWAY_SEED, ...options });
}

export interface Gateway {
  client: MqttClient;
  received: { topic: string; body: Record<string, unknown> }[];
  closed: () => boolean;
  /** Publishes at QoS 1 and waits for the cloud's answer on `responseTopic`. */
  request(topic: string, payload: unknown, responseTopic: string): Promise<Record<string, unknown>>;
  on(topic: string): Record<string, unknown>[];
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > 10_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Connects as the gateway with `token` (MQTT 3.1.1, no reconnect) and subscribes to `gateway/#`. */
export async function connectGateway(t: TestEmulator, token: string): Promise<Gateway> {
  const client = await connectAsync(`mqtt://127.0.0.1:${t.emu.mqttPort}`, {
    username: token, password: PROJECT_KEY, clientId: `gw-${token}`, protocolVersion: 4, reconnectPeriod: 0,
  });
  let isClosed = false;
  client.on('close', () => { isClosed = true; });
  const received: Gateway['received'] = [];
  client.on('message', (topic, payload) => {
    received.push({ topic, body: JSON.parse(payload.toString('utf8')) as Record<string, unknown> });
  });
  await client.subscribeAsync('gateway/#', { qos: 1 });
  const on = (topic: string) => received.filter((m) => m.topic === topic).map((m) => m.body);
  return {
    client, received, on, closed: () => isClosed,
    async request(topic, payload, responseTopic) {
      const before = on(responseTopic).length;
      await client.publishAsync(topic, typeof payload === 'string' ? payload : JSON.stringify(payload), { qos: 1 });
      await until(() => on(responseTopic).length > before, `an answer on ${responseTopic}`);
      return on(responseTopic)[before];
    },
  };
}

export { until };

/** The gateways a test opened, closed together after it. */
export class Gateways {
  private readonly open: Gateway[] = [];

  constructor(private readonly site: () => TestEmulator) {}

  async connect(token = 'gw-1-token'): Promise<Gateway> {
    const gw = await connectGateway(this.site(), token);
    this.open.push(gw);
    return gw;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.open.splice(0).map((gw) => gw.client.endAsync(true).catch(() => undefined)));
  }
}

/** A device's current values (A6 attributes_raw) and online state (A4 device read). */
export async function currentValues(t: TestEmulator, deviceId: string): Promise<Record<string, unknown>> {
  return (await t.api('GET', `/api/v1/device/${deviceId}/attributes_raw`)).body.info as Record<string, unknown>;
}

export async function isOnline(t: TestEmulator, deviceId: string): Promise<boolean> {
  return (await t.api('GET', `/api/v1/device/${deviceId}`)).body.info.online as boolean;
}
