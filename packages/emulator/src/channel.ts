// Contract between the emulator's cloud state (HTTP interfaces A/B) and its device channel
// (MQTT broker + TCP stream access). The channel knows topics and sockets; the state knows devices.
import type { JsonLimits } from './json-limits.js';

export interface CommandMessage {
  method: string;
  params: unknown;
  id: number;
}

/** Who may connect: the state answers, the channel asks. */
export interface DeviceDirectory {
  /** MQTT username = device access_token, password = project_key; the device id, or undefined. */
  authenticate(accessToken: string, projectKey: string): string | undefined;
}

/** What devices say; the state records it. Topics here are un-prefixed, as the device sees them. */
export interface ChannelEvents {
  onConnected(deviceId: string, via: 'mqtt' | 'tcp'): void;
  onDisconnected(deviceId: string, via: 'mqtt' | 'tcp'): void;
  /** `attributes` report: a flat object. */
  onReport(deviceId: string, attributes: Record<string, unknown>): void;
  /** `attributes/get/<id>`: the current values (all when keys is undefined). */
  onAttributesGet(deviceId: string, keys: string[] | undefined): Record<string, unknown>;
  /** `command/reply/<id>`: topicId is the `<id>` of the topic. */
  onCommandReply(deviceId: string, reply: CommandMessage, topicId: string): void;
  /** `event/report/<id>`. */
  onEvent(deviceId: string, topicId: string, event: { method: string; params: unknown }): void;
  /** `data/<identifier>` over MQTT, or raw bytes on the device's TCP stream (identifier undefined). */
  onStreamData(deviceId: string, identifier: string | undefined, data: Buffer): void;
}

/** The gateway side of the state (docs/protocol.md §3, gateway mode): who may speak for whom. */
export interface GatewayEvents {
  /** Whether this device's type is of kind gateway (only those may use `gateway/*`). */
  isGateway(deviceId: string): boolean;
  /** The device id bound to `gatewayId` under `addr`, or undefined: a gateway's whole scope. */
  subDevice(gatewayId: string, addr: string): string | undefined;
  /** `gateway/connect` / `gateway/disconnect` for a sub-device bound to this gateway. */
  onSubDeviceConnect(gatewayId: string, subDeviceId: string): void;
  onSubDeviceDisconnect(gatewayId: string, subDeviceId: string): void;
}

/** What the state can make a device receive. */
export interface DeviceChannel {
  /** Publish to a device's un-prefixed topic (e.g. `attributes/push`). False when not connected. */
  publish(deviceId: string, topic: string, payload: Buffer): Promise<boolean>;
  /** Write raw bytes on the device's registered TCP stream. False when it has none. */
  sendTcp(deviceId: string, data: Buffer): boolean;
  isOnline(deviceId: string): boolean;
  readonly mqttPort: number;
  readonly tcpPort: number;
  close(): Promise<void>;
}

export interface DeviceChannelOptions {
  mqttPort: number;
  tcpPort: number;
  host: string;
  directory: DeviceDirectory;
  events: ChannelEvents;
  /** Seconds a TCP stream socket may stay unregistered. */
  tcpRegisterTimeoutS: number;
  /** Bounds on JSON payloads of devices (JSON topics only; `data/<identifier>` is raw); default DEFAULT_JSON_LIMITS. */
  jsonLimits?: JsonLimits;
  /** Gateway scoping; without it every `gateway/*` publish is refused as "not a gateway". */
  gateways?: GatewayEvents;
}
