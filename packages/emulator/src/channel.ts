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

/** Largest MQTT packet body a device may send by default: room for a JSON payload at the default JSON bound (1 MiB) and its topic. */
export const DEFAULT_DEVICE_MAX_PACKET_BYTES = 2 * 1024 * 1024;

/** The default follows a raised JSON bound, keeping 64 KiB over it for the topic and header fields. */
export function defaultDevicePacketBound(jsonLimits: JsonLimits): number {
  return Math.max(DEFAULT_DEVICE_MAX_PACKET_BYTES, jsonLimits.maxBytes + 64 * 1024);
}

/** The device-side bound must leave room for the JSON bound, or that bound's clear refusal would never be reached. */
export function checkDevicePacketBound(maxPacketBytes: number, jsonLimits: JsonLimits): string | undefined {
  if (!Number.isInteger(maxPacketBytes) || maxPacketBytes <= 0) return `MQTT packet size limit (--mqtt-max-packet-bytes) must be a positive integer (got ${String(maxPacketBytes)})`;
  if (maxPacketBytes <= jsonLimits.maxBytes) {
    return `MQTT packet size limit (--mqtt-max-packet-bytes, ${maxPacketBytes}) must be larger than the JSON size limit (--json-max-bytes, ${jsonLimits.maxBytes}): a JSON payload and its topic must fit in one packet`;
  }
  return undefined;
}

export interface DeviceChannelStats {
  /** Device connections closed for announcing an MQTT packet over the bound (or a malformed length). */
  packetsTooLarge: number;
}

/** What the state can make a device receive. */
export interface DeviceChannel {
  /** Publish to a device's un-prefixed topic (e.g. `attributes/push`). False when not connected. */
  publish(deviceId: string, topic: string, payload: Buffer): Promise<boolean>;
  /** Write raw bytes on the device's registered TCP stream. False when it has none. */
  sendTcp(deviceId: string, data: Buffer): boolean;
  isOnline(deviceId: string): boolean;
  stats(): DeviceChannelStats;
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
  /** Largest MQTT packet body (remaining length) a device may send; a bigger header closes the connection. Default defaultDevicePacketBound(jsonLimits). */
  maxPacketBytes?: number;
  /** Gateway scoping; without it every `gateway/*` publish is refused as "not a gateway". */
  gateways?: GatewayEvents;
  /** Sees every message just before the broker writes it to a device's connection. */
  onForward?: (deviceId: string, topic: string, payload: Buffer) => void;
}
