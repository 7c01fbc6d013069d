// An application on the cloud's app-side subscription, written as its documentation says:
// MQTT 3.1.1 over WebSocket with TLS at /mqtt, username ProjectViewKey, password
// ProjectViewSecret, subscriptions at QoS 0. Collects every message it receives.
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';

export interface AppMessage {
  topic: string;
  // Tests read arbitrary payload fields.
  body: Record<string, any>;
}

export interface AppSubscriber {
  client: MqttClient;
  messages: AppMessage[];
  /** Granted QoS per filter (128 = refused; mqtt.js reports a refusal as an error carrying the SUBACK). */
  subscribe(filters: string[], qos?: 0 | 1 | 2): Promise<number[]>;
  close(): Promise<void>;
}

export type AppTransport = { kind: 'wss'; port: number; ca: Buffer } | { kind: 'ws'; port: number } | { kind: 'mqtt'; port: number };

export function appUrl(t: AppTransport): string {
  return t.kind === 'mqtt' ? `mqtt://127.0.0.1:${t.port}` : `${t.kind}://127.0.0.1:${t.port}/mqtt`;
}

/** Connects and resolves on CONNACK 0; rejects with the CONNACK code (or the socket error) otherwise. */
export async function connectApp(t: AppTransport, username: string, password: string): Promise<AppSubscriber> {
  const options: IClientOptions = {
    username, password, protocolVersion: 4, clean: true, reconnectPeriod: 0, connectTimeout: 10_000,
    clientId: `app_${Math.random().toString(16).slice(2, 8)}`,
    ...(t.kind === 'wss' ? { ca: t.ca, rejectUnauthorized: true } : {}),
  };
  const client = mqtt.connect(appUrl(t), options);
  const messages: AppMessage[] = [];
  client.on('message', (topic, payload) => {
    messages.push({ topic, body: JSON.parse(payload.toString('utf8')) as Record<string, any> });
  });
  await new Promise<void>((resolve, reject) => {
    client.once('connect', () => resolve());
    client.once('error', (err) => {
      client.end(true);
      reject(err);
    });
    client.once('close', () => reject(new Error('closed before CONNACK')));
  });
  return {
    client,
    messages,
    subscribe: (filters, qos = 0) => new Promise((resolve, reject) => {
      client.subscribe(filters, { qos }, (err, granted) => {
        const suback = (err as { packet?: { granted?: number[] } } | null)?.packet?.granted;
        if (suback !== undefined) resolve(suback);
        else if (err) reject(err);
        else resolve((granted ?? []).map((g) => g.qos));
      });
    }),
    close: () => new Promise((resolve) => client.end(true, {}, () => resolve())),
  };
}
