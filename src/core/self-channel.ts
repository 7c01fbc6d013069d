// fieldgate's own identity in the cloud, as the operations side sees it: report attributes, answer
// commands. The MQTT adapter is cloud/mqtt/self-channel.ts; tests use a fake.
import type { CommandOutcome } from './device-write-types.js';

export interface SelfCommand {
  id: number;
  method: string;
  params: Record<string, unknown>;
  /** The asker's (a page request): aborted when it left, so a read still waiting for the bus leaves its queue. */
  signal?: AbortSignal;
}

export type SelfCommandHandler = (command: SelfCommand) => Promise<CommandOutcome>;

export interface SelfChannel {
  /** One `attributes` report at QoS 1; resolves on PUBACK, rejects when the link is down. */
  reportAttributes(attributes: Readonly<Record<string, unknown>>): Promise<void>;
  /** Every command on the own identity goes to `handler`; its outcome is the reply. */
  onCommand(handler: SelfCommandHandler): void;
  /** Called after every (re)connect. */
  onUp(listener: () => void): void;
}
