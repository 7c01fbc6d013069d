// What the app side carries: the cloud state's events turned into app topics and payloads, with
// a bound on messages handed to the broker and not yet delivered (a burst beyond it is dropped
// and counted, never queued without end).
import type { Logger } from 'fieldgate/workspace-kit';
import type { DeviceRecord } from '../state/model.js';
import {
  appTopic, attributesPayload, commandReplyPayload, dataPayload, eventPayload, onlinePayload,
  type AppKind, type AttributeSource,
} from './topics.js';

export interface AppPublisher {
  publish(topic: string, payload: Buffer, done: () => void): void;
}

/** The state's side of the app stream: DeviceLink calls these as things happen. */
export interface AppStream {
  attributes(device: DeviceRecord, values: Record<string, unknown>, source: AttributeSource): void;
  event(device: DeviceRecord, topicId: string, event: { method: string; params: unknown }): void;
  commandReply(device: DeviceRecord, reply: unknown, topicId: string): void;
  data(device: DeviceRecord, identifier: string | undefined, data: Buffer): void;
  online(device: DeviceRecord, online: boolean): void;
}

export class AppFeed implements AppStream {
  private pending = 0;
  droppedBacklog = 0;

  constructor(
    private readonly viewKey: string,
    private readonly publisher: AppPublisher,
    /** Messages handed to the broker and not yet through its fan-out. */
    private readonly maxPending: number,
    private readonly now: () => number,
    private readonly log: Logger,
  ) {}

  get inFlight(): number {
    return this.pending;
  }

  attributes(device: DeviceRecord, values: Record<string, unknown>, source: AttributeSource): void {
    this.send(device, 'attributes', attributesPayload(device, values, source, this.now()));
  }

  event(device: DeviceRecord, topicId: string, event: { method: string; params: unknown }): void {
    this.send(device, 'event', eventPayload(device, event, topicId, this.now()));
  }

  commandReply(device: DeviceRecord, reply: unknown, topicId: string): void {
    this.send(device, 'command_reply', commandReplyPayload(device, reply, topicId, this.now()));
  }

  data(device: DeviceRecord, identifier: string | undefined, data: Buffer): void {
    this.send(device, 'data', dataPayload(device, identifier, data, this.now()));
  }

  online(device: DeviceRecord, online: boolean): void {
    this.send(device, 'online', onlinePayload(device, online, this.now()));
  }

  private send(device: DeviceRecord, kind: AppKind, payload: unknown): void {
    if (this.pending >= this.maxPending) {
      this.droppedBacklog += 1;
      if (this.droppedBacklog === 1 || this.droppedBacklog % 1000 === 0) {
        this.log.warn({ kind, deviceId: device.id, droppedBacklog: this.droppedBacklog, maxPending: this.maxPending }, 'app-side backlog full: message dropped');
      }
      return;
    }
    this.pending += 1;
    this.publisher.publish(appTopic(this.viewKey, device.view_token, kind), Buffer.from(JSON.stringify(payload)), () => {
      this.pending -= 1;
    });
  }
}
