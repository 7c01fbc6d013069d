// The state's side of the device channel: who may connect, what devices say, what they receive.
import type { Logger } from 'fieldgate/workspace-kit';
import type { AppStream } from './appside/feed.js';
import type { ChannelEvents, CommandMessage, DeviceChannel, DeviceDirectory, GatewayEvents } from './channel.js';
import {
  GATEWAY_COMMAND_TOPIC, GATEWAY_PUSH_TOPIC, gatewayCommandPayload, gatewayPushPayload, type GatewayPushShape,
} from './channel/gateway-topics.js';
import type { DeviceRecord, SubDeviceBinding } from './state/model.js';
import type { EmulatorState } from './state/state.js';

export const SYNC_REPLY_TIMEOUT_MS = 5000;
/** Stream bytes kept per device for inspection (tests, debugging). */
const STREAM_LOG_CAP = 50;

export interface StreamRecord {
  identifier: string | undefined;
  data: Buffer;
  ts: number;
}

interface SyncWaiter {
  deviceId: string;
  commandId: number;
  method: string;
  resolve(reply: CommandMessage | undefined): void;
}

/** How a sub-device's online state is held in the state: one "connection" through its gateway. */
const VIA_GATEWAY = 'gateway';

export class DeviceLink implements DeviceDirectory, ChannelEvents, GatewayEvents {
  private channel: DeviceChannel | undefined;
  /** The app-side subscription's feed, when the emulator serves one. */
  private app: AppStream | undefined;
  private readonly waiters = new Set<SyncWaiter>();
  readonly streamLog = new Map<string, StreamRecord[]>();
  readonly eventLog = new Map<string, { topicId: string; method: string; params: unknown; ts: number }[]>();

  constructor(
    private readonly state: EmulatorState,
    private readonly log: Logger,
    private readonly syncTimeoutMs = SYNC_REPLY_TIMEOUT_MS,
    /** Which documented shape `gateway/attributes/push` carries (a gateway must accept both). */
    public gatewayPushShape: GatewayPushShape = 'keyed',
  ) {}

  attach(channel: DeviceChannel): void {
    this.channel = channel;
  }

  attachAppStream(app: AppStream): void {
    this.app = app;
  }

  /** A cloud-side attribute update (interfaces A and B): stored, and seen by app subscribers. */
  updateCloudAttributes(device: DeviceRecord, values: Record<string, unknown>): number {
    const ts = this.state.setAttributes(device, values, 'cloud');
    this.app?.attributes(device, values, 'cloud');
    return ts;
  }

  private appOnline(deviceId: string, online: boolean): void {
    const device = this.state.devices.get(deviceId);
    if (device) this.app?.online(device, online);
  }

  // DeviceDirectory
  authenticate(accessToken: string, projectKey: string): string | undefined {
    if (projectKey !== this.state.project.project_key) return undefined;
    const device = this.state.deviceByToken(accessToken);
    // A sub-device reaches the cloud only through its gateway (its credential still serves interface B).
    if (device && this.state.kindOf(device) === 'sub_device') {
      this.log.info({ deviceId: device.id }, 'sub-device refused a direct connection');
      return undefined;
    }
    return device?.id;
  }

  // GatewayEvents
  isGateway(deviceId: string): boolean {
    const device = this.state.devices.get(deviceId);
    return device !== undefined && this.state.kindOf(device) === 'gateway';
  }

  subDevice(gatewayId: string, addr: string): string | undefined {
    return this.state.subDeviceAt(gatewayId, addr)?.id;
  }

  onSubDeviceConnect(gatewayId: string, subDeviceId: string): void {
    const device = this.state.devices.get(subDeviceId);
    if (device) this.state.noteActivity(device, 'connect');
    if (this.state.markConnected(subDeviceId, VIA_GATEWAY)) {
      this.log.info({ deviceId: subDeviceId, gatewayId }, 'sub-device online');
      this.appOnline(subDeviceId, true);
    }
  }

  onSubDeviceDisconnect(gatewayId: string, subDeviceId: string): void {
    if (this.state.markDisconnected(subDeviceId, VIA_GATEWAY)) {
      this.log.info({ deviceId: subDeviceId, gatewayId }, 'sub-device offline');
      this.appOnline(subDeviceId, false);
    }
  }

  // ChannelEvents
  onConnected(deviceId: string, via: 'mqtt' | 'tcp'): void {
    const device = this.state.devices.get(deviceId);
    if (device) this.state.noteActivity(device, via === 'mqtt' ? 'connect' : 'tcp_connect');
    // The channel logs each connection; this logs the device-level transition (any channel up).
    if (this.state.markConnected(deviceId, via)) {
      this.log.debug({ deviceId, via }, 'device state online');
      this.appOnline(deviceId, true);
    }
  }

  onDisconnected(deviceId: string, via: 'mqtt' | 'tcp'): void {
    if (this.state.markDisconnected(deviceId, via)) {
      this.log.debug({ deviceId, via }, 'device state offline');
      this.appOnline(deviceId, false);
    }
    // No sub-device is online while its gateway's connection is down (docs/protocol.md §3, gateway mode).
    if (via === 'mqtt') for (const sub of this.state.subDevicesOf(deviceId)) this.onSubDeviceDisconnect(deviceId, sub.id);
  }

  onReport(deviceId: string, attributes: Record<string, unknown>): void {
    const device = this.state.devices.get(deviceId);
    if (!device) return;
    this.state.setAttributes(device, attributes, 'report');
    this.state.noteActivity(device, 'attributes');
    this.app?.attributes(device, attributes, 'report');
  }

  onAttributesGet(deviceId: string, keys: string[] | undefined): Record<string, unknown> {
    const device = this.state.devices.get(deviceId);
    return device ? this.state.attributeValues(device, keys) : {};
  }

  onCommandReply(deviceId: string, reply: CommandMessage, topicId: string): void {
    const device = this.state.devices.get(deviceId);
    if (device) {
      this.state.noteActivity(device, 'command_reply');
      this.app?.commandReply(device, reply, topicId);
    }
    const pending = [...this.waiters].filter((w) => w.deviceId === deviceId);
    const byPayload = pending.find((w) => w.commandId === reply.id);
    const byTopic = pending.find((w) => String(w.commandId) === topicId);
    const waiter = byPayload ?? byTopic;
    if (waiter) {
      this.waiters.delete(waiter);
      waiter.resolve(reply);
      return;
    }
    // The vendor's LuatOS SDK replies on `command/reply/1000` unless told otherwise, and some of
    // its demos put no id in the payload (then the topic's stands in): a reply that names no
    // pending command goes to the oldest one of the same method, answered under that command's id.
    if (reply.id !== Number(topicId)) return;
    const byMethod = pending.find((w) => w.method === reply.method);
    if (!byMethod) return;
    this.log.debug({ deviceId, commandId: byMethod.commandId, topicId, method: reply.method }, 'command reply matched by method');
    this.waiters.delete(byMethod);
    byMethod.resolve({ ...reply, id: byMethod.commandId });
  }

  onEvent(deviceId: string, topicId: string, event: { method: string; params: unknown }): void {
    const device = this.state.devices.get(deviceId);
    if (!device) return;
    this.state.noteActivity(device, 'event');
    pushBounded(this.eventLog, deviceId, { topicId, ...event, ts: this.state.now() });
    this.app?.event(device, topicId, event);
  }

  onStreamData(deviceId: string, identifier: string | undefined, data: Buffer): void {
    const device = this.state.devices.get(deviceId);
    if (!device) return;
    this.state.noteActivity(device, 'data');
    pushBounded(this.streamLog, deviceId, { identifier, data, ts: this.state.now() });
    this.app?.data(device, identifier, data);
  }

  // What the HTTP interfaces make devices receive. Offline devices: accepted and dropped.
  // A sub-device's messages go through its gateway's connection, addressed by sub-device address.
  async pushAttributes(deviceId: string, values: Record<string, unknown>): Promise<boolean> {
    const device = this.state.devices.get(deviceId);
    if (device) this.app?.attributes(device, values, 'push');
    const route = this.gatewayRoute(deviceId);
    if (route === 'unbound') return false;
    if (route) return this.publishJson(route.gateway, GATEWAY_PUSH_TOPIC, gatewayPushPayload(this.gatewayPushShape, route.addr, values));
    return this.publishJson(deviceId, 'attributes/push', values);
  }

  async sendCommand(deviceId: string, command: CommandMessage): Promise<boolean> {
    const route = this.gatewayRoute(deviceId);
    if (route === 'unbound') return false;
    if (route) return this.publishJson(route.gateway, GATEWAY_COMMAND_TOPIC, gatewayCommandPayload(route.addr, command));
    return this.publishJson(deviceId, `command/send/${command.id}`, command);
  }

  /** undefined for a direct device; 'unbound' for a sub-device nobody speaks for (dropped). */
  private gatewayRoute(deviceId: string): SubDeviceBinding | 'unbound' | undefined {
    const device = this.state.devices.get(deviceId);
    if (!device || this.state.kindOf(device) !== 'sub_device') return undefined;
    if (device.binding === undefined) this.log.debug({ deviceId }, 'sub-device bound to no gateway: message dropped');
    return device.binding ?? 'unbound';
  }

  private publishJson(deviceId: string, topic: string, value: unknown): Promise<boolean> {
    return this.publish(deviceId, topic, Buffer.from(JSON.stringify(value)));
  }

  /** Sends the command and waits for the matching reply; undefined after the timeout. */
  async sendCommandSync(deviceId: string, command: CommandMessage): Promise<CommandMessage | undefined> {
    return new Promise<CommandMessage | undefined>((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        resolve(undefined);
      }, this.syncTimeoutMs);
      const waiter: SyncWaiter = {
        deviceId,
        commandId: command.id,
        method: command.method,
        resolve: (reply) => {
          clearTimeout(timer);
          resolve(reply);
        },
      };
      // Registered before publishing: a fast device may reply before publish() resolves.
      this.waiters.add(waiter);
      this.sendCommand(deviceId, command).catch((err: unknown) => this.log.warn({ deviceId, err }, 'command publish failed'));
    });
  }

  async pushStream(deviceId: string, identifier: string, mode: 'mqtt' | 'tcp', data: Buffer): Promise<boolean> {
    if (mode === 'tcp') return this.channel?.sendTcp(deviceId, data) ?? false;
    return this.publish(deviceId, `data/${identifier}/set`, data);
  }

  /** Answers every held sync request with a timeout (shutdown). */
  cancelWaiters(): void {
    for (const w of this.waiters) w.resolve(undefined);
    this.waiters.clear();
  }

  private async publish(deviceId: string, topic: string, payload: Buffer): Promise<boolean> {
    if (!this.channel) return false;
    const delivered = await this.channel.publish(deviceId, topic, payload);
    if (!delivered) this.log.debug({ deviceId, topic }, 'device not connected: message dropped');
    return delivered;
  }
}

function pushBounded<T>(map: Map<string, T[]>, key: string, item: T): void {
  const list = map.get(key) ?? [];
  list.push(item);
  if (list.length > STREAM_LOG_CAP) list.shift();
  map.set(key, list);
}
