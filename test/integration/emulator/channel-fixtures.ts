// Shared fakes and helpers for the device-channel integration tests.
import { connectAsync, type IClientOptions, type MqttClient } from 'mqtt';
import { silentLogger } from '../../../src/ops/log.js';
import type { ChannelEvents, CommandMessage, DeviceChannel, DeviceDirectory } from '../../../packages/emulator/src/channel.js';
import { startDeviceChannel } from '../../../packages/emulator/src/channel/index.js';

export const PROJECT_KEY = 'pk-test';
export const TOKENS: Record<string, string> = { 'tok-a': 'dev-A', 'tok-b': 'dev-B', 'tok-c': 'dev/C+#' };

export function fakeDirectory(): DeviceDirectory {
  return {
    authenticate: (accessToken, projectKey) => (projectKey === PROJECT_KEY ? TOKENS[accessToken] : undefined),
  };
}

export type EventCall =
  | { kind: 'connected'; deviceId: string; via: string }
  | { kind: 'disconnected'; deviceId: string; via: string }
  | { kind: 'report'; deviceId: string; attributes: Record<string, unknown> }
  | { kind: 'get'; deviceId: string; keys: string[] | undefined }
  | { kind: 'reply'; deviceId: string; reply: CommandMessage; topicId: string }
  | { kind: 'event'; deviceId: string; topicId: string; event: { method: string; params: unknown } }
  | { kind: 'stream'; deviceId: string; identifier: string | undefined; data: Buffer };

export class RecordingEvents implements ChannelEvents {
  readonly calls: EventCall[] = [];
  attributes: Record<string, unknown> = { temperature: 21.5, mode: 'auto' };

  onConnected(deviceId: string, via: 'mqtt' | 'tcp'): void {
    this.calls.push({ kind: 'connected', deviceId, via });
  }
  onDisconnected(deviceId: string, via: 'mqtt' | 'tcp'): void {
    this.calls.push({ kind: 'disconnected', deviceId, via });
  }
  onReport(deviceId: string, attributes: Record<string, unknown>): void {
    this.calls.push({ kind: 'report', deviceId, attributes });
  }
  onAttributesGet(deviceId: string, keys: string[] | undefined): Record<string, unknown> {
    this.calls.push({ kind: 'get', deviceId, keys });
    if (keys === undefined) return this.attributes;
    return Object.fromEntries(keys.filter((key) => key in this.attributes).map((key) => [key, this.attributes[key]]));
  }
  onCommandReply(deviceId: string, reply: CommandMessage, topicId: string): void {
    this.calls.push({ kind: 'reply', deviceId, reply, topicId });
  }
  onEvent(deviceId: string, topicId: string, event: { method: string; params: unknown }): void {
    this.calls.push({ kind: 'event', deviceId, topicId, event });
  }
  onStreamData(deviceId: string, identifier: string | undefined, data: Buffer): void {
    this.calls.push({ kind: 'stream', deviceId, identifier, data });
  }

  of<K extends EventCall['kind']>(kind: K): Extract<EventCall, { kind: K }>[] {
    return this.calls.filter((call): call is Extract<EventCall, { kind: K }> => call.kind === kind);
  }
}

export interface Harness {
  channel: DeviceChannel;
  events: RecordingEvents;
  url: string;
}

export async function startHarness(tcpRegisterTimeoutS = 10): Promise<Harness> {
  const events = new RecordingEvents();
  const channel = await startDeviceChannel(
    { host: '127.0.0.1', mqttPort: 0, tcpPort: 0, directory: fakeDirectory(), events, tcpRegisterTimeoutS },
    silentLogger(),
  );
  return { channel, events, url: `mqtt://127.0.0.1:${channel.mqttPort}` };
}

export async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export interface Received {
  topic: string;
  payload: string;
  qos: number;
  retain: boolean;
}

export interface Device {
  client: MqttClient;
  received: Received[];
}

/** A device connection as the SDKs make it: MQTT 3.1.1, no automatic reconnect. */
export async function connectDevice(url: string, token: string, options: IClientOptions = {}): Promise<Device> {
  const client = await connectAsync(url, {
    username: token,
    password: PROJECT_KEY,
    clientId: `client-${token}-${Math.random().toString(16).slice(2, 8)}`,
    protocolVersion: 4,
    reconnectPeriod: 0,
    connectTimeout: 10_000,
    ...options,
  });
  const received: Received[] = [];
  client.on('message', (topic, payload, packet) => {
    received.push({ topic, payload: payload.toString('utf8'), qos: packet.qos, retain: packet.retain });
  });
  return { client, received };
}

/** Proves the message path is drained: publish a marker to the device and wait for it. */
export async function flushTo(harness: Harness, deviceId: string, device: Device): Promise<void> {
  const marker = `marker-${Math.random().toString(16).slice(2)}`;
  await device.client.subscribeAsync('flush/marker', { qos: 1 });
  await harness.channel.publish(deviceId, 'flush/marker', Buffer.from(marker));
  await waitFor(() => device.received.some((msg) => msg.payload === marker), 'flush marker');
}

export async function closeQuietly(...devices: Device[]): Promise<void> {
  await Promise.all(devices.map((device) => device.client.endAsync(true).catch(() => undefined)));
}
